"""Every command's arguments, help text and examples: the whole `gpu-gitops` parser.

Start-up is part of the interface (`COMMAND --help`, `validate` in a pre-commit hook), so this
module imports nothing but the standard library: the modules that run a command (and load the
auditor, httpx, GitPython, PyYAML) are imported by cli.py only once the arguments are parsed and
the command runs. The few defaults that belong to those modules are copied here;
tests/test_startup.py checks each copy against its source.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from gpu_gitops import __version__

__all__ = [
    "ACTIONS_BOT",
    "AUDIT_DEADLINE",
    "AUDIT_FORMATS",
    "AUDIT_MAX_READ_BYTES",
    "COMMANDS",
    "FLEET_FORMATS",
    "GITHUB_API_URL",
    "PROMETHEUS_ENV",
    "PUSH_TIMEOUT_ENV",
    "SEVERITIES",
    "parser",
]

# command -> (module running it, line for `gpu-gitops --help`); in the order --help lists them.
# A new command is one line here, a define_<name>(parser) below and cmd_<name>(args, console)
# in its module.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": (
        "gpu_gitops.cli_validate",
        "Check profiles (and committed overlays); exit 2 on any error.",
    ),
    "render": (
        "gpu_gitops.cli_render",
        "Write overlays/<name>/ for each cluster from its profile.",
    ),
    "build": (
        "gpu_gitops.cli_build",
        "Print the built manifests of one cluster (multi-document YAML).",
    ),
    "schema": ("gpu_gitops.cli_schema", "Print the JSON Schema of gpu-profile.yaml (for editors)."),
    "demo": ("gpu_gitops.demo", "Run the whole loop on built-in example data, offline."),
    "audit": (
        "gpu_gitops.cli_audit",
        "Compare a live cluster with git: who changed what, and will anything revert it.",
    ),
    "adopt": (
        "gpu_gitops.cli_adopt",
        "Keep live drift: put what the audit found into the profile, on a branch for review.",
    ),
    "fleet": (
        "gpu_gitops.cli_fleet",
        "Every cluster's nightly audit from Prometheus: missing, incomplete, drifted; worst first.",
    ),
    "import": (
        "gpu_gitops.cli_import",
        "Write clusters/<name>/platform.yaml from the live platform Package.",
    ),
    "diff": (
        "gpu_gitops.cli_pr",
        "Render two refs and compare the built objects per cluster; exit 1 on changes or warnings.",
    ),
    "comment": (
        "gpu_gitops.cli_pr",
        "Post a body as one sticky pull-request comment, updated in place on every run.",
    ),
    "publish": (
        "gpu_gitops.cli_publish",
        "Build every cluster from its profile at HEAD and commit the flat manifests to the "
        "rendered branch (no checkout; the working tree and index are not touched). Prints the "
        'new commit, or "no changes".',
    ),
}

# copies of the running modules' constants (checked equal in tests/test_startup.py)
SEVERITIES = ("high", "medium", "low", "info")
"""audit.findings.finding.SEVERITIES"""
AUDIT_FORMATS = ("text", "json", "markdown", "prometheus")
"""the keys of audit.report.FORMATS"""
FLEET_FORMATS = ("text", "markdown", "json", "html")
"""the keys of audit.fleet.report.FORMATS"""
AUDIT_DEADLINE = 900.0
"""audit.kube.api.DEFAULT_DEADLINE"""
AUDIT_MAX_READ_BYTES = 1 << 30
"""audit.kube.api.DEFAULT_MAX_READ_BYTES"""
PROMETHEUS_ENV = (
    "GPU_GITOPS_PROMETHEUS_TOKEN",
    "GPU_GITOPS_PROMETHEUS_USER",
    "GPU_GITOPS_PROMETHEUS_PASSWORD",
)
"""audit.fleet.prometheus.ENV_TOKEN, ENV_USER, ENV_PASSWORD"""
GITHUB_API_URL = "https://api.github.com"
"""prbot.github.DEFAULT_API_URL"""
PUSH_TIMEOUT_ENV = "GPU_GITOPS_PUSH_TIMEOUT"
"""renderer.publish.deadline.PUSH_TIMEOUT_ENV"""

FAIL_ON = ("never", *reversed(SEVERITIES))
"""--fail-on: exit 1 for a finding at or above this severity (never: only 0 or 2)."""
FLEET_DEADLINE = 60.0
ACTIONS_BOT = "github-actions[bot]"
"""The login whose comment `comment` updates when the token cannot say whose it is."""


def parser(chosen: str | None) -> argparse.ArgumentParser:
    """Every command listed; only `chosen` gets its arguments."""
    top = argparse.ArgumentParser(
        prog="gpu-gitops",
        description="Render GPU profiles into Flux-ready manifests; audit live clusters for drift.",
        epilog="Exit codes: 0 success, 1 drift/diff/stale found, 2 bad input or error.",
    )
    top.add_argument("--version", action="version", version=f"gpu-gitops {__version__}")
    top.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            DEFINES[name](p)
    return top


def add_examples(parser: argparse.ArgumentParser, examples: str) -> None:
    """End the command's --help with usage examples, laid out as written."""
    parser.epilog = "examples:\n  " + examples.strip().replace("\n", "\n  ")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def add_repo_arg(parser: argparse.ArgumentParser) -> None:
    """--repo DIR; when left out, cli.py puts in the root of the enclosing git checkout."""
    parser.add_argument(
        "--repo",
        type=Path,
        metavar="DIR",
        help="the gitops checkout (default: the git checkout around the current directory)",
    )


def define_validate(p: argparse.ArgumentParser) -> None:
    add_examples(
        p,
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


def define_render(p: argparse.ArgumentParser) -> None:
    add_examples(
        p,
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


def define_build(p: argparse.ArgumentParser) -> None:
    add_examples(
        p,
        """
gpu-gitops build --cluster ams1
gpu-gitops build --cluster ams1 -o json | jq '.[].kind'""",
    )
    p.add_argument("--cluster", required=True, metavar="NAME")
    p.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    add_repo_arg(p)


def define_schema(p: argparse.ArgumentParser) -> None:
    add_examples(p, "gpu-gitops schema > gpu-profile.schema.json")


def define_demo(p: argparse.ArgumentParser) -> None:
    add_examples(p, "gpu-gitops demo")


def define_audit(p: argparse.ArgumentParser) -> None:
    """`audit`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops audit --cluster ams1                          # current kubeconfig context
gpu-gitops audit --cluster ams1 --context ams1-admin -o json
gpu-gitops audit --cluster ams1 --snapshot dumps/ams1/   # offline, from kubectl dumps:
  kubectl get RESOURCE -A --show-managed-fields -o yaml > dumps/ams1/RESOURCE.yaml
gpu-gitops audit --cluster ams1 --in-cluster --pushgateway http://pgw:9091   # the nightly job
gpu-gitops audit --cluster ams1 --fail-on high             # exit 1 only for high drift
exit codes: 0 clean (nothing at or above --fail-on), 1 drift, 2 bad input or incomplete;
the nightly CronJob runs --fail-on never: its Job fails only when the audit is incomplete""",
    )
    add_live_args(p)
    p.add_argument("-o", "--output", choices=AUDIT_FORMATS, default="text")
    p.add_argument(
        "--pushgateway",
        metavar="URL",
        help="also push the metrics to this Prometheus Pushgateway (grouped by job and cluster), "
        "within --deadline",
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="low",
        metavar="{" + ",".join(FAIL_ON) + "}",
        help="exit 1 when a finding at or above this severity exists (default: low; never: "
        "drift does not change the exit code, an incomplete audit still exits 2)",
    )
    add_repo_arg(p)


def add_live_args(p: argparse.ArgumentParser) -> None:
    """--cluster and the options that say where and how the live state is read (audit, adopt)."""
    p.add_argument("--cluster", required=True, metavar="NAME", help="cluster (clusters/<NAME>/)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: KUBECONFIG, ~/.kube)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    p.add_argument(
        "--snapshot",
        type=Path,
        metavar="DIR",
        help="audit a folder of `kubectl get --show-managed-fields -o yaml` dumps",
    )
    p.add_argument(
        "--in-cluster",
        action="store_true",
        help="service-account credentials; desired state from Flux's artifact (no checkout)",
    )
    p.add_argument(
        "--ref",
        metavar="REF",
        help="audit against the profiles at REF, built in memory (default: what Flux applied)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=AUDIT_DEADLINE,
        metavar="SECONDS",
        help="give up reading after this long and report the audit incomplete (audit: the push "
        "to the Pushgateway ends within it too) "
        f"(default: {AUDIT_DEADLINE:g}, within the nightly Job's deadline)",
    )
    p.add_argument(
        "--max-read-bytes",
        type=_size,
        default=AUDIT_MAX_READ_BYTES,
        metavar="SIZE",
        help="stop reading after this many bytes of answers in all (Ki, Mi, Gi) and report the "
        f"audit incomplete (default: {AUDIT_MAX_READ_BYTES >> 30}Gi, about twice what 200,000 "
        "objects take)",
    )


def _size(text: str) -> int:
    from kubedata.quantity import QuantityError, parse_size  # only when the option is given

    try:
        return parse_size(text)
    except QuantityError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def define_adopt(p: argparse.ArgumentParser) -> None:
    """`adopt`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops adopt --cluster ams1 --dry-run                 # print the profile diff only
gpu-gitops adopt --cluster ams1                           # every adoptable finding
gpu-gitops adopt --cluster ams1 --finding 3f2a9c01bd      # one finding (ids: gpu-gitops audit)
gpu-gitops adopt --cluster ams1 --snapshot dumps/ams1/    # from kubectl get -o yaml dumps
GITHUB_TOKEN=... gpu-gitops adopt --cluster ams1 --pr --repo-slug acme/gitops
exit codes: 0 adopted (or nothing to adopt), 2 error (nothing written, no branch left)""",
    )
    add_live_args(p)
    p.add_argument(
        "--finding",
        action="append",
        default=[],
        metavar="ID",
        help="adopt this finding (repeatable; default: every adoptable one)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the profile diff; write nothing")
    p.add_argument(
        "--pr",
        action="store_true",
        help="push the branch and open (or update) a pull request; needs --repo-slug",
    )
    p.add_argument(
        "--repo-slug", metavar="OWNER/NAME", help="the GitHub repository of the pull request"
    )
    p.add_argument(
        "--remote", default="origin", metavar="NAME", help="where --pr pushes (default: origin)"
    )
    p.add_argument(
        "--base", metavar="BRANCH", help="the pull request's base branch (default: the current one)"
    )
    add_repo_arg(p)
    p.epilog = (p.epilog or "") + (
        "\n\nenvironment (--pr):\n  GITHUB_TOKEN     token allowed to push and open pull requests"
        f" (never printed)\n  GITHUB_API_URL   API base URL (default {GITHUB_API_URL})\n"
        f"  {PUSH_TIMEOUT_ENV}  seconds the push and the GitHub calls may take in all"
        " (default 300)"
    )


def define_fleet(p: argparse.ArgumentParser) -> None:
    add_examples(
        p,
        """\
gpu-gitops fleet --prometheus http://prometheus:9090
gpu-gitops fleet --prometheus https://prom.example --cluster 'ams*' --min-severity low
gpu-gitops fleet --prometheus http://prometheus:9090 -o html > fleet.html   # a CI artifact
gpu-gitops fleet --prometheus http://prometheus:9090 --fail-on high   # exit 1 only for high
exit codes: 0 nothing at or above --fail-on, 1 drift or an audit missing (no complete audit
for 36 h) or incomplete, 2 error (Prometheus unreachable or refusing)""",
    )
    p.add_argument(
        "--prometheus",
        required=True,
        metavar="URL",
        help="the Prometheus that scrapes the audits' Pushgateway (honor_labels: true)",
    )
    p.add_argument("-o", "--output", choices=FLEET_FORMATS, default="text")
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="GLOB",
        help="only clusters whose name matches (fnmatch, e.g. 'ams*'; repeatable)",
    )
    p.add_argument(
        "--min-severity",
        choices=SEVERITIES,
        default="medium",
        help="list each finding at or above this severity (default: medium)",
    )
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="low",
        metavar="{" + ",".join(FAIL_ON) + "}",
        help="exit 1 when a finding at or above this severity exists, or an audit is missing "
        "or incomplete (default: low; never: always 0 unless an error)",
    )
    p.add_argument(
        "--at",
        metavar="TIME",
        help="evaluate at this time (Unix seconds or ISO 8601 with zone; default: now)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=FLEET_DEADLINE,
        metavar="SECONDS",
        help=f"give up on Prometheus after this long (default: {FLEET_DEADLINE:g})",
    )
    p.epilog = (p.epilog or "") + (
        f"\n\nenvironment (never printed):\n  {PROMETHEUS_ENV[0]}    bearer token\n"
        f"  {PROMETHEUS_ENV[1]}, {PROMETHEUS_ENV[2]}    basic auth"
    )


def define_import(p: argparse.ArgumentParser) -> None:
    """`import`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops import --cluster ams1                      # current kubeconfig context
gpu-gitops import --cluster ams1 --context ams1-admin
Cozystack: clusters/NAME/platform.yaml; plain Flux: clusters/NAME/kubevirt.yaml
exit codes: 0 written, 2 error""",
    )
    p.add_argument("--cluster", required=True, metavar="NAME", help="cluster (clusters/<NAME>/)")
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig (default: KUBECONFIG, ~/.kube)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    add_repo_arg(p)


def define_diff(p: argparse.ArgumentParser) -> None:
    """`diff`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops diff --base main
gpu-gitops diff --base origin/main --head HEAD -o markdown > diff.md
gpu-gitops diff --base v1.2.0 --head v1.3.0 -o json | jq '.warnings'
gpu-gitops diff --base main --live-findings http://prometheus:9090   # what merging overwrites
gpu-gitops diff --base main --live-findings reports/   # saved `audit -o json`, one per cluster""",
    )
    p.add_argument("--base", required=True, metavar="REF", help="the ref to compare against")
    p.add_argument(
        "--head",
        default="HEAD",
        metavar="REF",
        help="the changed ref (default: HEAD; never the working tree)",
    )
    p.add_argument("-o", "--output", choices=("text", "markdown", "json"), default="text")
    p.add_argument(
        "--live-findings",
        metavar="SOURCE",
        help="warn where a change overwrites live drift: a Prometheus URL (the nightly audits' "
        "series) or a folder of `audit -o json` reports, one per cluster",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up on the --live-findings Prometheus after this long (default: 60)",
    )
    add_repo_arg(p)


def define_comment(p: argparse.ArgumentParser) -> None:
    """`comment`'s arguments and examples; its --repo is the GitHub OWNER/NAME, as in gh."""
    add_examples(
        p,
        """
gpu-gitops diff --base origin/main -o markdown > diff.md
GITHUB_TOKEN=... gpu-gitops comment --repo acme/gitops --pr 42 --body diff.md
gpu-gitops diff --base origin/main -o markdown | gpu-gitops comment --repo acme/gitops --pr 42""",
    )
    p.add_argument(
        "--repo",
        dest="github_repo",
        required=True,
        metavar="OWNER/NAME",
        help="the GitHub repository, as in gh",
    )
    p.add_argument("--pr", required=True, type=int, metavar="N", help="pull request number")
    p.add_argument(
        "--body",
        default="-",
        metavar="FILE",
        help="file holding the Markdown body, '-' for stdin (default)",
    )
    p.add_argument(
        "--author",
        metavar="LOGIN",
        help="login whose comment is updated (default: the token's user; "
        f"{ACTIONS_BOT} for tokens that cannot read it)",
    )
    p.epilog = (p.epilog or "") + (
        "\n\nenvironment:\n  GITHUB_TOKEN     token allowed to comment (required; never printed)"
        f"\n  GITHUB_API_URL   API base URL (default {GITHUB_API_URL}; GitHub Enterprise: "
        "https://HOST/api/v3)"
    )


def define_publish(p: argparse.ArgumentParser) -> None:
    """`publish`'s arguments and examples."""
    add_examples(
        p,
        """
gpu-gitops publish
gpu-gitops publish --push            # a push rejected as non-fast-forward is redone on the new tip
gpu-gitops publish --branch rendered-staging --push --remote upstream   # its clusters only
gpu-gitops publish --allow-dirty     # uncommitted profile edits; hydrator.metadata says so""",
    )
    p.add_argument(
        "--branch",
        default=None,
        metavar="NAME",
        help="publish only the clusters whose spec.flux.branch is NAME (default: every "
        "branch a profile names, each cluster to its own)",
    )
    p.add_argument("--push", action="store_true", help="push the branch after committing")
    p.add_argument(
        "--remote", default="origin", metavar="NAME", help="remote to push to (default: origin)"
    )
    p.add_argument(
        "--allow-dirty",
        action="store_true",
        help="publish uncommitted changes to clusters/ instead of refusing them",
    )
    add_repo_arg(p)


DEFINES: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "validate": define_validate,
    "render": define_render,
    "build": define_build,
    "schema": define_schema,
    "demo": define_demo,
    "audit": define_audit,
    "adopt": define_adopt,
    "fleet": define_fleet,
    "import": define_import,
    "diff": define_diff,
    "comment": define_comment,
    "publish": define_publish,
}
