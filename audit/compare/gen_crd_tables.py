"""Generate crd_tables.json: the defaults and list types of every released version of the CRDs the
auditor compares, from the upstream repositories' git history.

    python -m audit.compare.gen_crd_tables [--git DIR] [--discover] [--check]

Why this exists: a cluster runs any release of the GPU Operator, KubeVirt, Flux or Cozystack, and
what its API server defaults (and how server-side apply merges each list) changes between them; a
table written by hand from a sample of versions misses the versions in between. Each entry of the
generated file names the versions it holds in (crd_tables.py reads it).

Inputs are git repositories (bare mirrors or clones) found under DIR (`--git`, else
$GPU_GITOPS_UPSTREAM_GIT) as `OWNER+NAME/repo`, `OWNER+NAME`, `OWNER/NAME` or `OWNER/NAME.git`;
`git clone --bare https://github.com/OWNER/NAME DIR/OWNER/NAME.git` makes one. Without
`--discover` the tables are rebuilt from the pins in the committed file (each tag checked against
its pinned commit), so the same mirrors give byte-identical output; `--discover` pins every
release tag in the ranges below afresh (a new upstream release). `--check` writes nothing and
exits 1 when the committed file differs from what the pins make.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubedata.yaml_io import load_all

from audit.compare.crd import schema_of
from audit.errors import AuditError

__all__ = ["OUTPUT", "GenError", "build", "discover", "dump", "find_repo", "main"]

OUTPUT = Path(__file__).with_name("crd_tables.json")
_ENV = "GPU_GITOPS_UPSTREAM_GIT"
_COMMAND = "python -m audit.compare.gen_crd_tables"
_RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


class GenError(AuditError):
    """An input is missing or does not match its pin; nothing was written."""


@dataclass(frozen=True)
class Product:
    name: str
    repo: str
    first: tuple[int, int, int]
    """Oldest release tag included."""
    below: tuple[int, int, int]
    """First release tag not included."""


GPU_OPERATOR = Product("gpu-operator", "NVIDIA/gpu-operator", (23, 9, 0), (26, 8, 0))
KUBEVIRT = Product("kubevirt", "kubevirt/kubevirt", (1, 3, 0), (1, 9, 0))
FLUX = Product("flux", "fluxcd/flux2", (2, 3, 0), (2, 9, 0))
COZYSTACK = Product("cozystack", "cozystack/cozystack", (1, 0, 0), (2, 0, 0))
FLUX_CONTROLLERS = {
    "helm-controller": "fluxcd/helm-controller",
    "kustomize-controller": "fluxcd/kustomize-controller",
    "source-controller": "fluxcd/source-controller",
}
_GPU_CRDS = "deployments/gpu-operator/crds"
_KUBEVIRT_GO = "pkg/virt-operator/resource/generate/components/validations_generated.go"
_KUBEVIRT_KINDS = {"kubevirt": ("kubevirt.io", "KubeVirt", "kubevirts.kubevirt.io")}
_COZYSTACK_CRDS = (
    "internal/crdinstall/manifests/cozystack.io_packages.yaml",
    "internal/crdinstall/manifests/cozystack.io_packagesources.yaml",
)
_FLUX_CRD = re.compile(r"/releases/download/(v[0-9]+\.[0-9]+\.[0-9]+)/[a-z-]+\.crds\.yaml")


def version_key(version: str) -> tuple[int, ...]:
    found = _RELEASE.match(version)
    if not found:
        raise ValueError(f"not a release version: {version}")
    return tuple(int(n) for n in found.groups())


# -- git -----------------------------------------------------------------------------------------


def find_repo(root: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for candidate in (
        root / f"{owner}+{name}" / "repo",
        root / f"{owner}+{name}",
        root / owner / name,
        root / owner / f"{name}.git",
    ):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    raise GenError(f"{root}: no git repository of {repo} (clone it to {root}/{owner}/{name}.git)")


class Git:
    """Reads of the mirrors under one folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[str, Path] = {}

    def _run(self, repo: str, *args: str) -> str:
        where = self._dirs.get(repo) or self._dirs.setdefault(repo, find_repo(self.root, repo))
        done = subprocess.run(
            ["git", "--git-dir", str(where), *args], capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise GenError(f"{repo}: git {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def tags(self, repo: str) -> list[str]:
        return self._run(repo, "tag", "--list").split()

    def commit(self, repo: str, tag: str) -> str:
        return self._run(repo, "rev-parse", f"{tag}^{{commit}}").strip()

    def ls(self, repo: str, commit: str, folder: str) -> list[str]:
        return self._run(repo, "ls-tree", "--name-only", commit, folder + "/").split()

    def show(self, repo: str, commit: str, path: str) -> str:
        return self._run(repo, "show", f"{commit}:{path}")


# -- discovery: which files of which tags --------------------------------------------------------


def _releases(git: Git, product: Product) -> list[tuple[str, str]]:
    """(tag, commit) of every release tag in the product's range, oldest first."""
    tags = [
        t
        for t in git.tags(product.repo)
        if _RELEASE.match(t) and product.first <= version_key(t) < product.below
    ]
    return [(t, git.commit(product.repo, t)) for t in sorted(tags, key=version_key)]


def _pin(product: str, version: str, repo: str, tag: str, commit: str, path: str) -> dict[str, str]:
    return {
        "product": product,
        "version": version,
        "repo": repo,
        "tag": tag,
        "commit": commit,
        "path": path,
    }


def discover(git: Git) -> dict[str, Any]:
    """Pins of every input file of every release in the ranges, and Flux's controller versions."""
    pins: list[dict[str, str]] = []
    for tag, commit in _releases(git, GPU_OPERATOR):
        for path in git.ls(GPU_OPERATOR.repo, commit, _GPU_CRDS):
            if path.endswith((".yaml", ".yml")):
                pins.append(_pin(GPU_OPERATOR.name, tag, GPU_OPERATOR.repo, tag, commit, path))
    for tag, commit in _releases(git, KUBEVIRT):
        pins.append(_pin(KUBEVIRT.name, tag, KUBEVIRT.repo, tag, commit, _KUBEVIRT_GO))
    for tag, commit in _releases(git, COZYSTACK):
        for path in _COZYSTACK_CRDS:
            pins.append(_pin(COZYSTACK.name, tag, COZYSTACK.repo, tag, commit, path))
    flux: dict[str, dict[str, str]] = {}
    for tag, commit in _releases(git, FLUX):
        flux[tag] = {}
        for controller in FLUX_CONTROLLERS:
            text = git.show(FLUX.repo, commit, f"manifests/bases/{controller}/kustomization.yaml")
            found = _FLUX_CRD.search(text)
            if not found:
                raise GenError(f"{FLUX.repo}@{tag}: no CRD release URL for {controller}")
            flux[tag][controller] = found.group(1)
    for controller, repo in FLUX_CONTROLLERS.items():
        versions = sorted({v[controller] for v in flux.values()}, key=version_key)
        for version in versions:
            commit = git.commit(repo, version)
            for path in git.ls(repo, commit, "config/crd/bases"):
                pins.append(_pin(controller, version, repo, version, commit, path))
    return {"flux": flux, "pins": pins}


# -- build: the tables from the pinned files -----------------------------------------------------


def _kubevirt_crds(text: str, where: str) -> Iterator[dict[str, Any]]:
    """The CRDs virt-operator generates, from the schemas in validations_generated.go (Go raw
    strings: a backtick inside one is spelt "` + "`" + `")."""
    for key, (group, kind, name) in _KUBEVIRT_KINDS.items():
        found = re.search(r'\n\t"' + key + r'": `(.*?)`,\n', text, re.S)
        if not found:
            raise GenError(f"{where}: no schema {key!r}")
        body = found.group(1).replace('` + "`" + `', "`")
        [schema] = load_all(body)
        yield {
            "metadata": {"name": name},
            "spec": {
                "group": group,
                "names": {"kind": kind},
                "versions": [{"name": "v1", "storage": True, "served": True, "schema": schema}],
            },
        }


def _crds(text: str, path: str, where: str) -> Iterator[dict[str, Any]]:
    if path.endswith(".go"):
        yield from _kubevirt_crds(text, where)
        return
    for doc in load_all(text):
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            yield doc


def _storage(crd: dict[str, Any]) -> str:
    versions = (crd.get("spec") or {}).get("versions") or ()
    return next((str(v["name"]) for v in versions if v.get("storage")), "")


def _ranges(versions: Iterable[str], order: Sequence[str]) -> list[str]:
    """Versions as runs of consecutive releases of `order`: ["v24.3.0..v25.10.1", "v26.7.0"]."""
    held = set(versions)
    out: list[str] = []
    run: list[str] = []
    for version in [*order, ""]:
        if version in held:
            run.append(version)
            continue
        if run:
            out.append(run[0] if len(run) == 1 else f"{run[0]}..{run[-1]}")
        run = []
    return out


def _value_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def build(git: Git, pinned: dict[str, Any]) -> dict[str, Any]:
    """The tables from the pins (checked against the mirrors)."""
    products: dict[str, dict[str, Any]] = {}
    # (group/Kind) -> product, crd name, {version: storage}, {(path, value): versions}, lists
    kinds: dict[str, dict[str, Any]] = {}
    for pin in pinned["pins"]:
        where = f"{pin['repo']}@{pin['tag']}:{pin['path']}"
        if git.commit(pin["repo"], pin["tag"]) != pin["commit"]:
            raise GenError(f"{where}: tag no longer at the pinned commit {pin['commit']}")
        product = products.setdefault(pin["product"], {"repo": pin["repo"], "versions": []})
        if pin["version"] not in product["versions"]:
            product["versions"].append(pin["version"])
        for crd in _crds(git.show(pin["repo"], pin["commit"], pin["path"]), pin["path"], where):
            spec = crd.get("spec") or {}
            key = f"{spec.get('group', '')}/{(spec.get('names') or {}).get('kind', '')}"
            storage = _storage(crd)
            schema = schema_of(crd, storage)
            table = kinds.setdefault(
                key,
                {
                    "product": pin["product"],
                    "crd": str((crd.get("metadata") or {}).get("name", "")),
                    "storage": {},
                    "defaults": {},
                    "lists": {},
                },
            )
            table["storage"].setdefault(storage, []).append(pin["version"])
            for default in schema.defaults if schema else ():
                entry = (tuple(default.path), _value_key(default.value))
                table["defaults"].setdefault(entry, []).append(pin["version"])
            for path, rule in (schema.lists if schema else {}).items():
                kind = "atomic" if rule.atomic else "map" if rule.keys else "set"
                marked = (tuple(path), kind, tuple(rule.keys or ()))
                table["lists"].setdefault(marked, []).append(pin["version"])
    for product in products.values():
        product["versions"].sort(key=version_key)
    out_kinds: dict[str, Any] = {}
    for key, table in sorted(kinds.items()):
        order = products[table["product"]]["versions"]
        versions = sorted({v for vs in table["storage"].values() for v in vs}, key=version_key)
        out_kinds[key] = {
            "product": table["product"],
            "crd": table["crd"],
            "versions": _ranges(versions, order),
            "storage": {k: _ranges(v, order) for k, v in sorted(table["storage"].items())},
            "defaults": [
                {"path": list(path), "value": json.loads(value), "versions": _ranges(vs, order)}
                for (path, value), vs in sorted(table["defaults"].items())
            ],
            "lists": [
                {
                    "path": list(path),
                    "type": kind,
                    "keys": list(keys),
                    "versions": _ranges(vs, order),
                }
                for (path, kind, keys), vs in sorted(table["lists"].items())
            ],
        }
    return {
        "generator": _COMMAND,
        "products": {k: products[k] for k in sorted(products)},
        "flux": pinned["flux"],
        "pins": pinned["pins"],
        "kinds": out_kinds,
    }


def dump(tables: dict[str, Any]) -> str:
    """Deterministic JSON, one pin, default or list entry a line (readable diffs)."""
    lines = ["{"]
    sections = list(tables.items())
    for i, (name, value) in enumerate(sections):
        tail = "," if i < len(sections) - 1 else ""
        if name == "kinds":
            lines.append(f'  "kinds": {{{"" if value else "}"}')
            for j, (kind, table) in enumerate(value.items()):
                lines.append(f"    {json.dumps(kind)}: {{")
                fields = list(table.items())
                for k, (field, sub) in enumerate(fields):
                    sep = "," if k < len(fields) - 1 else ""
                    if isinstance(sub, list) and sub and isinstance(sub[0], dict):
                        lines.append(f"      {json.dumps(field)}: [")
                        items = [json.dumps(e, sort_keys=True) for e in sub]
                        lines += [f"        {e}," for e in items[:-1]] + [f"        {items[-1]}"]
                        lines.append(f"      ]{sep}")
                    else:
                        lines.append(f"      {json.dumps(field)}: {json.dumps(sub)}{sep}")
                lines.append("    }" + ("," if j < len(value) - 1 else ""))
            lines.append("  }" + tail)
        elif name == "pins":
            lines.append('  "pins": [')
            items = [json.dumps(p, sort_keys=True) for p in value]
            lines += [f"    {p}," for p in items[:-1]] + [f"    {items[-1]}"]
            lines.append("  ]" + tail)
        else:
            lines.append(f"  {json.dumps(name)}: {json.dumps(value, sort_keys=True)}{tail}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=_COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", type=Path, default=os.environ.get(_ENV), help=f"(${_ENV})")
    parser.add_argument("--discover", action="store_true", help="pin every release tag afresh")
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if args.git is None:
        print(f"error: --git DIR or ${_ENV}: where the upstream mirrors are", file=sys.stderr)
        return 2
    git = Git(Path(args.git))
    try:
        pinned = discover(git) if args.discover else json.loads(OUTPUT.read_text("utf-8"))
        text = dump(build(git, pinned))
    except (GenError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        same = args.output.is_file() and args.output.read_text("utf-8") == text
        print(f"{args.output}: {'up to date' if same else 'differs from what the pins make'}")
        return 0 if same else 1
    tmp = args.output.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(args.output)
    print(f"{args.output}: {len(pinned['pins'])} pinned files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
