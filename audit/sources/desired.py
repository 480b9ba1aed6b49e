"""Desired state of one cluster, from git: what Flux applied, else the rendered tip, else a build.

In order (DESIGN §6):
1. `flux-applied`: the rendered branch at the commit Flux last applied
   (`Kustomization.status.lastAppliedRevision`, `<branch>@sha1:<sha>`), read through the git
   command from the object database, without a checkout;
2. `rendered-tip`: the tip of the rendered branch (local, else `origin/<branch>`);
3. `profiles-head`: rendered and built in memory from the profiles at HEAD (or `--ref`).
The rendered layout (renderer/publish/flat.py) is `<cluster>/<object>.yaml`,
`<cluster>/kustomization.yaml`, `<cluster>/hydrator.metadata` and `<cluster>/source/` (the
profile's files): every YAML object under the folder except kustomization.yaml and source/.

In a cluster (no checkout, no git credential) the same bytes Flux applied come from
source-controller: `artifact.py` downloads `GitRepository.status.artifact.url`.
The profile (for provenance, the Cozystack version and Node labels) is the one published with the
rendered folder (`<cluster>/source/`); a folder published before source/ existed has none, and
then it is read at the rendered commit's source commit when the repository has it, else at HEAD
(and not at all from an artifact).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kubedata.objects import KubeObject
from kubedata.yaml_io import load_all
from renderer.errors import ProfileError
from renderer.gitdir import (
    GitDir,
    branch_name,
    find_sha,
    list_tree,
    read_blobs,
    read_tree,
    resolve_sha,
    tree_entries,
)
from renderer.profile import (
    KUBEVIRT_FILE,
    PLATFORM_FILE,
    PROFILE_FILE,
    ClusterFiles,
    LoadedProfile,
    load_profile_bytes,
)
from renderer.publish.flat import KUSTOMIZATION_FILE, METADATA_FILE, SOURCE_DIR, Metadata

from audit.errors import AuditError
from audit.sources.packed import PackedObjects, pack_files

if TYPE_CHECKING:
    from audit.compare.worker import Worker

__all__ = [
    "Desired",
    "DesiredSource",
    "desired_from_files",
    "desired_from_repo",
    "parse_revision",
    "profile_at",
    "published_profile",
    "rendered_objects",
]

DesiredSource = Literal["flux-applied", "rendered-tip", "profiles-head"]
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


@dataclass(frozen=True)
class Desired:
    cluster: str
    source: DesiredSource
    revision: str
    objects: PackedObjects
    profile: LoadedProfile | None = None
    notes: tuple[str, ...] = field(default=())


def parse_revision(revision: str) -> tuple[str, str]:
    """(ref, sha) of a Flux revision: `main@sha1:<sha>`, `sha1:<sha>`, or the old `main/<sha>`."""
    ref, at, digest = revision.partition("@")
    if not at:
        ref, digest = "", revision
    algo, colon, sha = digest.partition(":")
    if not colon:
        if "/" in digest:
            ref, _, sha = digest.rpartition("/")
        else:
            sha = digest
    elif algo not in ("sha1", "sha256"):
        sha = ""
    return ref, sha if _SHA.match(sha) else ""


PARSE_MIN = 2000
"""Object files from which the worker process parses some of them (compare/worker.py): below,
its start-up is more than it saves. Measured with benchmarks/bench_audit.py."""
CHUNK = 250
"""Files parsed at once, here or by the worker (one chunk in flight: memory stays small)."""


def rendered_objects(
    files: Mapping[str, bytes], cluster: str, where: str, worker: Worker | None = None
) -> PackedObjects:
    """Every object of `<cluster>/` in a rendered tree (path -> bytes), file order; the profile's
    files under `<cluster>/source/` are not objects. Given a worker, a large tree is parsed
    in chunks on two cores: each by the worker when it is free, else here."""
    prefix = f"{cluster}/"
    source = f"{prefix}{SOURCE_DIR}/"
    paths = [
        path
        for path in sorted(files)
        if path.startswith(prefix)
        and path.endswith((".yaml", ".yml"))
        and not path.startswith(source)
        and path.rpartition("/")[2] != KUSTOMIZATION_FILE
    ]
    if worker is None or len(paths) < PARSE_MIN:
        return pack_files({path: files[path] for path in paths}, where)
    starts = range(0, len(paths), CHUNK)
    parts: list[PackedObjects] = [PackedObjects() for _ in starts]
    sent = -1  # the chunk the worker has, if any
    for i, start in enumerate(starts):
        chunk = {path: files[path] for path in paths[start : start + CHUNK]}
        if sent >= 0 and not worker.busy:
            parts[sent], sent = worker.packed(), -1
        if sent < 0:
            worker.pack(chunk, where)
            sent = i
            continue
        try:
            parts[i] = pack_files(chunk, where)
        except AuditError:
            worker.packed()  # an error in an earlier file comes first, as it would here
            raise
    if sent >= 0:
        parts[sent] = worker.packed()
    objects = PackedObjects()
    for part in parts:
        objects.extend(part)
    return objects


def _metadata(files: Mapping[str, bytes], cluster: str) -> Metadata | None:
    data = files.get(f"{cluster}/{METADATA_FILE}")
    return Metadata.from_bytes(data) if data is not None else None


def _cluster_files(repo: GitDir, commit: str, cluster: str) -> ClusterFiles | None:
    """The bytes of clusters/<cluster>/'s input files at a commit."""
    files = read_tree(repo, commit, f"clusters/{cluster}")
    profile = files.get(f"clusters/{cluster}/{PROFILE_FILE}")
    if profile is None:
        return None
    folder = f"clusters/{cluster}/"
    return ClusterFiles(
        profile, files.get(folder + PLATFORM_FILE), files.get(folder + KUBEVIRT_FILE)
    )


def profile_at(repo: GitDir, commit: str, cluster: str) -> LoadedProfile | None:
    """The cluster's profile at a commit (read leniently: provenance only needs its fields)."""
    files = _cluster_files(repo, commit, cluster)
    if files is None:
        return None
    try:
        return load_profile_bytes(cluster, files)
    except ProfileError:
        return None


def published_profile(
    files: Mapping[str, bytes], cluster: str
) -> tuple[LoadedProfile | None, list[str]]:
    """The profile published with a rendered folder (`<cluster>/source/`), and notes; None when
    the folder has none (published before source/ existed) or it does not load."""
    folder = f"{cluster}/{SOURCE_DIR}/"
    profile = files.get(folder + PROFILE_FILE)
    if profile is None:
        return None, []
    try:
        published = ClusterFiles(
            profile, files.get(folder + PLATFORM_FILE), files.get(folder + KUBEVIRT_FILE)
        )
        return load_profile_bytes(cluster, published), []
    except ProfileError as exc:
        first = exc.problems[0].message if exc.problems else str(exc)
        return None, [f"the published {folder}{PROFILE_FILE} does not load ({first})"]


def _no_profile(repo: GitDir, commit: str, cluster: str, name: str) -> AuditError:
    """Why a commit has no clusters/<cluster>/: a rendered commit given as --ref, or no such
    cluster there (then the ones there are named)."""
    where = f"{name} ({commit[:12]})"
    top = tree_entries(repo, commit)
    if cluster in top and "clusters" not in top:
        return AuditError(
            f"{where} is a rendered commit (it holds {cluster}/, not clusters/{cluster}/): --ref "
            "takes a commit of the profiles, such as main; without --ref the audit reads what "
            "Flux applied from the rendered branch"
        )
    folder = tree_entries(repo, f"{commit}:clusters") if top.get("clusters") == "tree" else {}
    there = sorted(name for name, kind in folder.items() if kind == "tree")
    known = f" (clusters there: {', '.join(there)})" if there else " (it has no clusters/ folder)"
    return AuditError(f"clusters/{cluster}/ does not exist at {where}{known}: check --cluster")


def _build_from_profiles(
    repo: GitDir, commit: str, cluster: str, name: str
) -> tuple[list[KubeObject], LoadedProfile]:
    # the renderer and kustomize load only for an audit that builds (start-up of a snapshot audit)
    from renderer.kustomize.workers import build_overlays
    from renderer.render import render_profiles
    from renderer.validate import check_files

    files = _cluster_files(repo, commit, cluster)
    if files is None:
        raise _no_profile(repo, commit, cluster, name)
    checked = check_files({cluster: files})
    built = build_overlays(render_profiles(checked.profiles).overlays)[cluster]
    objects = [d for d in load_all(built, f"the build of {cluster}") if isinstance(d, dict)]
    return objects, checked.profiles[0]


def _flux_branch(repo: GitDir, head: str, cluster: str) -> str:
    """The rendered branch the profile at HEAD names; read only when Flux's revision names none
    (a git read and a profile load saved on a snapshot audit's way to what Flux applied)."""
    loaded = profile_at(repo, head, cluster)
    return loaded.profile.spec.flux.branch if loaded else "rendered"


def _rendered_tip(repo: GitDir, branch: str) -> str | None:
    for ref in (branch, f"origin/{branch}", f"refs/remotes/origin/{branch}"):
        if (found := find_sha(repo, ref)) is not None:
            return found
    return None


def _with_profile(
    repo: GitDir, files: Mapping[str, bytes], cluster: str, head: str
) -> tuple[LoadedProfile | None, list[str]]:
    published, notes = published_profile(files, cluster)
    if published is not None:
        return published, notes
    meta = _metadata(files, cluster)
    if meta is not None and meta.source_commit:
        source = find_sha(repo, meta.source_commit)
        if source is None:
            notes.append(
                f"the rendered commit's source {meta.source_commit[:12]} is not in this "
                "repository: profile fields are read at HEAD"
            )
        else:
            return profile_at(repo, source, cluster), notes
    return profile_at(repo, head, cluster), notes


def _rendered_at(
    repo: GitDir,
    commit: str,
    cluster: str,
    head: str,
    source: DesiredSource,
    revision: str,
    notes: list[str],
    where: str = "",
    worker: Worker | None = None,
) -> Desired | None:
    """The rendered `<cluster>/` folder at `commit`; None when the commit has no such folder.
    `where` names the commit in error messages (default: its short sha)."""
    listed = list_tree(repo, commit, cluster)
    if worker is not None and len(listed) >= PARSE_MIN:
        worker.start()  # its start-up overlaps the read
    files = read_blobs(repo, listed)
    if not files:
        return None
    profile, more = _with_profile(repo, files, cluster, head)
    objects = rendered_objects(files, cluster, where or commit[:12], worker)
    return Desired(cluster, source, revision, objects, profile, tuple(notes + more))


def desired_from_repo(
    repo: GitDir,
    cluster: str,
    *,
    applied_revision: str | None = None,
    ref: str | None = None,
    worker: Worker | None = None,
) -> Desired:
    """Desired state from a checkout's object database (see the module docstring).

    `ref` forces a build from the profiles at that ref (`--ref`); `worker` parses part of a
    large rendered tree.
    """
    head = resolve_sha(repo, ref or "HEAD")
    notes: list[str] = []
    if ref is None:
        applied_ref = ""
        if applied_revision:
            applied_ref, sha = parse_revision(applied_revision)
            commit = None
            if sha:
                commit = find_sha(repo, sha)
                if commit is None:
                    notes.append(
                        f"Flux applied {applied_revision}, which this repository does not have "
                        "(git fetch?)"
                    )
            if commit is not None:
                found = _rendered_at(
                    repo, commit, cluster, head, "flux-applied", applied_revision, notes, "", worker
                )
                if found is not None:
                    return found
                notes.append(f"{applied_revision} has no {cluster}/ folder")
        else:
            notes.append("no Flux Kustomization applying this cluster's folder was found")
        branch = applied_ref or _flux_branch(repo, head, cluster)
        tip = _rendered_tip(repo, branch)
        if tip is not None:
            revision = f"{branch}@sha1:{tip}"
            found = _rendered_at(
                repo, tip, cluster, head, "rendered-tip", revision, notes, branch, worker
            )
            if found is not None:
                return found
            notes.append(f"the rendered branch {branch} has no {cluster}/ folder")
        else:
            notes.append(f"the rendered branch {branch} does not exist here")
    name = ref or _head_name(repo)
    objects, profile = _build_from_profiles(repo, head, cluster, name)
    notes.append(f"desired state built from the profiles at {name}")
    return Desired(
        cluster,
        "profiles-head",
        f"{name}@sha1:{head}",
        PackedObjects(objects),
        profile,
        tuple(notes),
    )


def _head_name(repo: GitDir) -> str:
    return branch_name(repo) or "HEAD"


def desired_from_files(
    files: Mapping[str, bytes],
    cluster: str,
    path: str,
    revision: str,
    source: DesiredSource,
    notes: tuple[str, ...] = (),
    worker: Worker | None = None,
) -> Desired:
    """Desired state from a rendered tree held in memory (a source-controller artifact).

    `path` is the Kustomization's spec.path (`./ams1`); its folder is read as `<cluster>/`.
    """
    folder = path.strip().removeprefix("./").strip("/") or cluster
    remapped = {
        f"{cluster}/{p[len(folder) + 1 :]}": data
        for p, data in files.items()
        if p.startswith(folder + "/")
    }
    objects = rendered_objects(remapped, cluster, revision, worker)
    if not objects:
        raise AuditError(f"the artifact of {revision} has no objects under {folder}/")
    profile, more = published_profile(remapped, cluster)
    return Desired(cluster, source, revision, objects, profile, (*notes, *more))
