"""Reading clusters/<name>/gpu-profile.yaml and the live files import writes (platform.yaml,
kubevirt.yaml) from disk or from their bytes."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kubedata.files import read_regular
from kubedata.yaml_io import Marks, load_marked, nearest_line

from renderer.cozystack_names import PLATFORM_PACKAGE, PLATFORM_VALUES
from renderer.errors import Problem, ProfileError, yaml_problems
from renderer.model import GPUProfile
from renderer.repofiles import Folders, read_bytes
from renderer.rules.syntax import DNS_LABEL
from renderer.schema import decode

__all__ = [
    "INPUT_FILES",
    "KUBEVIRT_FILE",
    "LIVE_FILES",
    "MAX_FILE_BYTES",
    "PLATFORM_FILE",
    "PROFILE_FILE",
    "ClusterFiles",
    "LiveDoc",
    "LoadedProfile",
    "check_cluster_name",
    "cluster_named_by",
    "discover_clusters",
    "kubevirt_path",
    "load_profile",
    "load_profile_bytes",
    "parse_kubevirt",
    "parse_platform",
    "parse_profile",
    "platform_path",
    "profile_path",
    "read_cluster_files",
    "read_profile",
]

PROFILE_FILE = "gpu-profile.yaml"
PLATFORM_FILE = "platform.yaml"
KUBEVIRT_FILE = "kubevirt.yaml"
LIVE_FILES = (PLATFORM_FILE, KUBEVIRT_FILE)
"""What `import` writes: the live objects the build merges into."""
INPUT_FILES = (PROFILE_FILE, *LIVE_FILES)
"""Every file of a cluster folder the build reads."""
MAX_FILE_BYTES = 256 * 1024
"""A profile is a page of YAML; anything larger is a mistake (or an attack), not a profile."""


def profile_path(cluster: str) -> str:
    """clusters/<cluster>/gpu-profile.yaml, relative to the repository root."""
    return f"clusters/{cluster}/{PROFILE_FILE}"


def platform_path(cluster: str) -> str:
    """clusters/<cluster>/platform.yaml, relative to the repository root."""
    return f"clusters/{cluster}/{PLATFORM_FILE}"


def kubevirt_path(cluster: str) -> str:
    """clusters/<cluster>/kubevirt.yaml, relative to the repository root."""
    return f"clusters/{cluster}/{KUBEVIRT_FILE}"


class ClusterFiles(NamedTuple):
    """The bytes of a cluster's input files (None: absent)."""

    profile: bytes
    platform: bytes | None = None
    kubevirt: bytes | None = None


@dataclass(frozen=True)
class LiveDoc:
    """A live file (platform.yaml: the platform Package; kubevirt.yaml: the KubeVirt CR) as it
    is today, with its line marks."""

    file: str
    obj: dict[str, Any]
    marks: Marks


@dataclass(frozen=True)
class LoadedProfile:
    """A decoded profile with where each field was written."""

    file: str
    profile: GPUProfile
    marks: Marks
    platform: LiveDoc | None
    kubevirt: LiveDoc | None = None
    origin_url: str | None = None
    """URL of the checkout's `origin` remote: the default of spec.flux.url (None: unknown)."""

    @property
    def name(self) -> str:
        return self.profile.metadata.name

    def line(self, *path: str | int) -> int:
        """Line of the nearest written ancestor of `path` (1 if none)."""
        return nearest_line(self.marks, path)

    def written(self, *path: str | int) -> bool:
        """Whether the profile spells out this field (rather than taking its default)."""
        return path in self.marks


def check_cluster_name(name: str, file: str = "--cluster") -> None:
    """Refuse names that are not DNS-1123 labels (and so never paths like ../x)."""
    if not re.fullmatch(DNS_LABEL, name):
        raise ProfileError(
            [
                Problem(
                    file,
                    0,
                    "",
                    f'"{name}" is not a cluster name: use a DNS-1123 label, e.g. "ams1"',
                )
            ]
        )


def _read(root: Path, rel: str) -> str | None:
    """The text of the repository file `rel` (None: absent); a link or a special file is refused."""
    data = read_bytes(root, rel, MAX_FILE_BYTES)
    return None if data is None else _decode(data, rel)


def parse_profile(text: str, file: str, folder: str | None) -> tuple[GPUProfile, Marks]:
    """Decode profile text; `folder` (the cluster folder name) must equal metadata.name."""
    with yaml_problems():
        data, marks = load_marked(text, file)
    profile = decode(GPUProfile, data, file, marks)
    if folder is not None and profile.metadata.name != folder:
        line = marks.get(("metadata", "name"), 1)
        raise ProfileError(
            [
                Problem(
                    file,
                    line,
                    "metadata.name",
                    f'"{profile.metadata.name}" must equal the folder name "{folder}"; '
                    "rename one of them",
                )
            ]
        )
    return profile, marks


_Shapes = tuple[tuple[tuple[str, ...], type, str], ...]
# What the renderer reads of platform.yaml, and the shape each must have when it is written.
_PLATFORM_SHAPES: _Shapes = (
    (("metadata",), dict, "a mapping"),
    (("metadata", "annotations"), dict, "a mapping"),
    (("spec",), dict, "a mapping"),
    (("spec", "variant"), str, "a string, e.g. isp-full"),
    (("spec", "components"), dict, "a mapping"),
    (("spec", "components", "platform"), dict, "a mapping"),
    (PLATFORM_VALUES, dict, "a mapping"),
    ((*PLATFORM_VALUES, "bundles"), dict, "a mapping"),
    ((*PLATFORM_VALUES, "bundles", "iaas"), dict, "a mapping"),
    ((*PLATFORM_VALUES, "bundles", "system"), dict, "a mapping"),
    ((*PLATFORM_VALUES, "bundles", "enabledPackages"), list, "a list of package names"),
    ((*PLATFORM_VALUES, "bundles", "disabledPackages"), list, "a list of package names"),
    ((*PLATFORM_VALUES, "resources"), dict, "a mapping"),
    # the kubevirt Package takes it as a whole number (the renderer predicts it as one)
    ((*PLATFORM_VALUES, "resources", "cpuAllocationRatio"), int, "a whole number, e.g. 10"),
)
_CONFIG = ("spec", "configuration")
_PERMITTED = (*_CONFIG, "permittedHostDevices")
# The same for kubevirt.yaml: the lists the build merges with.
_KUBEVIRT_SHAPES: _Shapes = (
    (("metadata",), dict, "a mapping"),
    (("metadata", "annotations"), dict, "a mapping"),
    (("spec",), dict, "a mapping"),
    (_CONFIG, dict, "a mapping"),
    ((*_CONFIG, "developerConfiguration"), dict, "a mapping"),
    ((*_CONFIG, "developerConfiguration", "featureGates"), list, "a list of gate names"),
    (_PERMITTED, dict, "a mapping"),
    ((*_PERMITTED, "pciHostDevices"), list, "a list of devices"),
    ((*_PERMITTED, "mediatedDevices"), list, "a list of devices"),
)


def _shape_problems(
    data: dict[str, Any], marks: Marks, file: str, shapes: _Shapes
) -> list[Problem]:
    """A problem per field of `shapes` written with another shape (a list of strings where the
    shape says so, of mappings where it names devices)."""
    problems: list[Problem] = []
    bad: set[tuple[str, ...]] = set()
    for path, kind, what in shapes:
        parent: Any = data
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if any(path[:i] in bad for i in range(len(path))) or not isinstance(parent, dict):
            continue
        if path[-1] not in parent:
            continue
        value: Any = parent[path[-1]]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if ok and isinstance(value, list):
            item = dict if what == "a list of devices" else str
            ok = all(isinstance(v, item) for v in value)
        if not ok:
            bad.add(path)
            problems.append(
                Problem(file, nearest_line(marks, path), ".".join(path), f"must be {what}")
            )
    return problems


def _parse_live(
    text: str, file: str, what: str, want: dict[str, str], shapes: _Shapes, name: str | None = None
) -> LiveDoc:
    """Decode a live file; ProfileError names every field of the wrong shape."""
    with yaml_problems():
        data, marks = load_marked(text, file)
    if not isinstance(data, dict):
        raise ProfileError(
            [Problem(file, nearest_line(marks, ()), "", f"must be {what}, a mapping")]
        )
    problems = [
        Problem(file, marks.get((k,), 1), k, f'must be "{v}"')
        for k, v in want.items()
        if data.get(k) != v
    ]
    problems += _shape_problems(data, marks, file, shapes)
    meta = data.get("metadata")
    if name is not None and isinstance(meta, dict) and meta.get("name") != name:
        at = nearest_line(marks, ("metadata", "name"))
        problems.append(Problem(file, at, "metadata.name", f'must be "{name}"'))
    if problems:
        raise ProfileError(sorted(problems, key=lambda p: p.line))
    return LiveDoc(file, data, marks)


def parse_platform(text: str, file: str) -> LiveDoc:
    """Decode platform.yaml text; ProfileError names every field of the wrong shape."""
    return _parse_live(
        text,
        file,
        "the platform Package (kubectl get packages.cozystack.io cozystack.cozystack-platform "
        "-o yaml)",
        {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package"},
        _PLATFORM_SHAPES,
        PLATFORM_PACKAGE,
    )


def parse_kubevirt(text: str, file: str) -> LiveDoc:
    """Decode kubevirt.yaml text; ProfileError names every field of the wrong shape. Whether it is
    the CR the profile names is a rule (renderer.rules.live_files)."""
    return _parse_live(
        text,
        file,
        "the KubeVirt CR (gpu-gitops import writes it)",
        {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt"},
        _KUBEVIRT_SHAPES,
    )


def read_profile(root: Path, name: str) -> GPUProfile | None:
    """Only clusters/<name>/gpu-profile.yaml (None: absent), e.g. to know what to import."""
    file = profile_path(name)
    text = _read(root, file)
    return None if text is None else parse_profile(text, file, name)[0]


def load_profile(root: Path, name: str) -> LoadedProfile:
    """Load clusters/<name>/ under the repository `root`. Paths in messages are relative to it."""
    folder = root / "clusters" / name
    # A folder found under clusters/ is named by its path; a name from --cluster by the option.
    plain = "/" not in name and name not in (".", "..")
    check_cluster_name(name, f"clusters/{name}/" if plain and folder.is_dir() else "--cluster")
    file = profile_path(name)
    text = _read(root, file)
    if text is None:
        raise ProfileError([Problem(file, 0, "", "file not found")])
    profile, marks = parse_profile(text, file, name)
    platform, kubevirt = (_read(root, path(name)) for path in (platform_path, kubevirt_path))
    return LoadedProfile(
        file,
        profile,
        marks,
        None if platform is None else parse_platform(platform, platform_path(name)),
        None if kubevirt is None else parse_kubevirt(kubevirt, kubevirt_path(name)),
    )


def read_cluster_files(folders: Folders, name: str) -> ClusterFiles | None:
    """The bytes of clusters/<name>/'s input files, read through folder descriptors (render reads
    thousands); None when anything is unusual (a name that is no DNS label, no profile, a link, a
    FIFO, a file over MAX_FILE_BYTES...): load_profile then says what is wrong."""
    if not re.fullmatch(DNS_LABEL, name):
        return None
    data: list[bytes | None] = []
    try:
        fd = folders.get(f"clusters/{name}")
        if fd is None:
            return None
        for file in INPUT_FILES:
            try:
                data.append(read_regular(file, MAX_FILE_BYTES, follow=False, dir_fd=fd))
            except FileNotFoundError:
                data.append(None)
    except (OSError, ProfileError):
        return None
    profile, platform, kubevirt = data
    return None if profile is None else ClusterFiles(profile, platform, kubevirt)


def _decode(data: bytes, display: str) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise ProfileError(
            [Problem(display, 0, "", f"file is {len(data)} bytes, over the {MAX_FILE_BYTES} limit")]
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileError([Problem(display, 0, "", "not UTF-8 text")]) from None


def load_profile_bytes(name: str, files: ClusterFiles) -> LoadedProfile:
    """Load clusters/<name>/ from the bytes of its files (read from git, not from disk)."""
    check_cluster_name(name, f"clusters/{name}/")
    file = profile_path(name)
    loaded, marks = parse_profile(_decode(files.profile, file), file, name)
    platform, kubevirt = platform_path(name), kubevirt_path(name)
    return LoadedProfile(
        file,
        loaded,
        marks,
        None
        if files.platform is None
        else parse_platform(_decode(files.platform, platform), platform),
        None
        if files.kubevirt is None
        else parse_kubevirt(_decode(files.kubevirt, kubevirt), kubevirt),
    )


def cluster_named_by(repo: Path, raw: str) -> str:
    """A PATH argument of a command (cluster folder, profile file, or bare name) -> cluster name.

    A path, taken from the current directory or from the repository (so `validate .` in
    clusters/ams1 works), must lead to a folder directly under <repo>/clusters/: anything else is
    refused rather than silently reduced to its last component.
    """
    path = Path(raw)
    if path.name == PROFILE_FILE:
        path = path.parent
    name = path.name
    if len(path.parts) != 1 or path.is_absolute():
        clusters = (repo / "clusters").resolve()
        tried = ((base / path).resolve() for base in (Path.cwd(), repo))
        found = [c for c in tried if c.parent == clusters]
        if not found:
            raise ProfileError(
                [Problem(raw, 0, "", f"not a cluster folder under {repo / 'clusters'}/")]
            )
        name = found[0].name
    check_cluster_name(name, raw)
    return name


def discover_clusters(root: Path) -> list[str]:
    """Names of the folders under clusters/ that hold a profile, sorted."""
    base = root / "clusters"
    if not base.is_dir():
        return []
    # what base.glob("*/gpu-profile.yaml") finds (links followed), without pathlib's cost per path
    with os.scandir(base) as entries:
        found = [
            e.name
            for e in entries
            if e.is_dir() and os.path.exists(f"{e.path}/{PROFILE_FILE}")  # noqa: PTH110 (speed)
        ]
    return sorted(found)
