"""The gpu-gitops command line: argument parsing and exit codes; the work is in the packages."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from audit.errors import AuditError
from gpu_gitops import __version__
from gpu_gitops.cli_audit import register as register_audit
from gpu_gitops.cli_import import register as register_import
from gpu_gitops.cli_pr import register as register_pr
from gpu_gitops.cli_publish import register as register_publish
from gpu_gitops.commands import Command, add_command, add_repo_arg
from gpu_gitops.console import Console
from gpu_gitops.demo import run_demo
from renderer.build import build_overlays
from renderer.committed import build_committed
from renderer.crds import CRDFileError, Registry, namespace_kind
from renderer.errors import Problem, ProfileError, RenderError
from renderer.model import GPUProfile
from renderer.overlays import KUSTOMIZATION
from renderer.profile import PROFILE_FILE, check_cluster_name
from renderer.render import label_commands, left_over, render_profiles
from renderer.repofiles import repo_path
from renderer.schema import json_schema
from renderer.validate import Checked, check_clusters
from renderer.write import checkout_lock, extra_paths, stale_files, write_dirs
from renderer.yaml_io import load_all

__all__ = ["main"]

SCHEMA_ID = "https://gpu-gitops.dev/schemas/gpu-profile-v1alpha1.json"


def _warnings(console: Console, warnings: Sequence[object]) -> None:
    for w in warnings:
        console.problem(str(w))


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    repo: Path = args.repo
    names = [_cluster_of(repo, p) for p in args.paths]
    checked = check_clusters(repo, names)
    _warnings(console, checked.warnings)
    # Committed overlays must build as they are (offline, from inside the checkout only).
    present = [
        lp.name
        for lp in checked.profiles
        if (repo_path(repo, f"overlays/{lp.name}") / KUSTOMIZATION).is_file()
    ]
    for name in build_committed(repo, present):
        console.say(f"overlays/{name}: builds")
    if args.crds:
        _check_schemas(args.crds, checked, console)
    console.say(f"{len(checked.profiles)} profile(s) valid, {len(checked.warnings)} warning(s)")
    return 0


def _check_schemas(folder: Path, checked: Checked, console: Console) -> None:
    """Built output of every cluster against the CRDs in `folder`; ProfileError on a mismatch."""
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if not files:
        raise ProfileError([Problem(str(folder), 0, "", "no CRD files (.yaml, .yml, .json) here")])
    try:
        registry = Registry.from_files(files, extra=[namespace_kind()], strict=False)
    except CRDFileError as exc:
        raise ProfileError([Problem(str(folder), 0, "--crds", str(exc))]) from None
    built = build_overlays(render_profiles(checked.profiles).overlays)
    problems: list[Problem] = []
    unchecked: set[str] = set()
    for name, text in built.items():
        for obj in load_all(text):
            if (obj.get("apiVersion"), obj.get("kind")) not in registry.kinds:
                unchecked.add(f"{obj.get('kind')} ({obj.get('apiVersion')})")
                continue
            problems += [Problem(f"overlays/{name}", 0, "", e) for e in registry.errors(obj)]
    if problems:
        raise ProfileError(problems)
    if unchecked:
        console.say(f"no CRD in {folder} for: {', '.join(sorted(unchecked))}; not schema-checked")
    console.say(f"built output of {len(built)} cluster(s) matches the CRDs in {folder}")


def _cluster_of(repo: Path, raw: str) -> str:
    """A PATH argument (cluster folder, profile file, or bare name) -> cluster name.

    A path must lead to a folder directly under <repo>/clusters/: anything else is refused rather
    than silently reduced to its last component.
    """
    path = Path(raw)
    if path.name == PROFILE_FILE:
        path = path.parent
    if len(path.parts) > 1 or path.is_absolute():
        clusters = (repo / "clusters").resolve()
        if not any((base / path).resolve().parent == clusters for base in (Path.cwd(), repo)):
            raise ProfileError(
                [Problem(raw, 0, "", f"not a cluster folder under {repo / 'clusters'}/")]
            )
    name = path.name
    check_cluster_name(name, raw)
    return name


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    repo: Path = args.repo
    checked = check_clusters(repo, args.cluster)
    _warnings(console, checked.warnings)
    rendered = render_profiles(checked.profiles)
    # Overlays of removed clusters are pruned only when every cluster is rendered.
    gone = () if args.cluster else tuple(left_over(repo, rendered))
    if args.check:
        stale = stale_files(repo, rendered.dirs) + extra_paths(repo, rendered.dirs, gone)
        for path in sorted(stale):
            console.say(f"stale: {path}")
        if stale:
            console.say("generated files are out of date: run gpu-gitops render and commit them")
            return 1
        console.say("generated files are up to date")
        return 0
    with checkout_lock(repo):
        changed = write_dirs(repo, rendered.dirs, remove=gone)
    for d in changed:
        console.say(f"{'removed' if d in gone else 'wrote'} {d}/")
    if not changed:
        console.say("no changes")
    for lp in checked.profiles:
        for command in label_commands(lp):
            console.data(command + "\n")
    return 0


def cmd_build(args: argparse.Namespace, console: Console) -> int:
    check_cluster_name(args.cluster)
    checked = check_clusters(args.repo, [args.cluster])
    _warnings(console, checked.warnings)
    rendered = render_profiles(checked.profiles)
    text = build_overlays(rendered.overlays)[args.cluster]
    if args.output == "json":
        text = json.dumps(load_all(text), indent=2, sort_keys=True) + "\n"
    console.data(text)
    return 0


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    console.data(json.dumps(json_schema(GPUProfile, SCHEMA_ID), indent=2) + "\n")
    return 0


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    return run_demo(console)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-gitops",
        description="Render GPU profiles into Flux-ready manifests; audit live clusters for drift.",
        epilog="Exit codes: 0 success, 1 drift/diff/stale found, 2 bad input or error.",
    )
    parser.add_argument("--version", action="version", version=f"gpu-gitops {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = add_command(
        sub,
        "validate",
        cmd_validate,
        "Check profiles (and committed overlays); exit 2 on any error.",
        """
gpu-gitops validate
gpu-gitops validate clusters/ams1
gpu-gitops validate clusters/ams1/gpu-profile.yaml
gpu-gitops validate --crds crds/    # CRD files of the cluster (kubectl get crd -o yaml)""",
    )
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="cluster folders or profile files (default: all)"
    )
    p.add_argument(
        "--crds",
        type=Path,
        metavar="DIR",
        help="also check the built output against the CRD files in DIR (schema, unknown fields)",
    )
    add_repo_arg(p)
    p = add_command(
        sub,
        "render",
        cmd_render,
        "Write overlays/<name>/ for each cluster from its profile.",
        """
gpu-gitops render
gpu-gitops render --cluster ams1
gpu-gitops render --check    # in CI: exit 1 when overlays are stale""",
    )
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="NAME",
        help="only this cluster (repeatable)",
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if generated files are stale"
    )
    add_repo_arg(p)
    p = add_command(
        sub,
        "build",
        cmd_build,
        "Print the built manifests of one cluster (multi-document YAML).",
        """
gpu-gitops build --cluster ams1
gpu-gitops build --cluster ams1 -o json | jq '.[].kind'""",
    )
    p.add_argument("--cluster", required=True, metavar="NAME")
    p.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    add_repo_arg(p)
    add_command(
        sub,
        "schema",
        cmd_schema,
        "Print the JSON Schema of gpu-profile.yaml (for editors).",
        "gpu-gitops schema > gpu-profile.schema.json",
    )
    add_command(
        sub,
        "demo",
        cmd_demo,
        "Run the whole loop on built-in example data, offline.",
        "gpu-gitops demo",
    )
    # Commands defined in their own modules register here, one line each.
    register_audit(sub)
    register_import(sub)
    register_pr(sub)
    register_publish(sub)
    return parser


def main(argv: Sequence[str] | None = None, console: Console | None = None) -> int:
    console = console or Console()
    args = _parser().parse_args(argv)
    func: Command = args.func
    try:
        return func(args, console)
    except ProfileError as exc:
        for problem in exc.problems:
            console.problem(str(problem))
        return 2
    except (RenderError, AuditError) as exc:
        console.problem(f"gpu-gitops: error: {exc}")
        return 2
    except KeyboardInterrupt:
        console.say("interrupted")
        return 130
    except Exception as exc:
        if args.debug:
            raise
        console.problem(
            f"gpu-gitops: error: internal error ({type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}); "
            "rerun with --debug and report it"
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
