"""The reference files' fetch script (tests/reference.py), against an HTTP server on loopback."""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import reference
from tests.reference import PINNED, FetchError, Pin, fetch

RAW = "https://raw.githubusercontent.com/"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """(folder, URL): a loopback server laid out as raw.githubusercontent.com."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_Quiet, directory=str(root))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield root, f"http://127.0.0.1:{httpd.server_port}"
        httpd.shutdown()
        thread.join()


def serve(root: Path, files: dict[str, bytes]) -> list[Pin]:
    """Put `files` (local path -> bytes) on the server; their pins."""
    pins = []
    for local, data in files.items():
        path = f"acme/charts/{'a' * 40}/{local}"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
        pins.append(Pin(local, RAW + path, hashlib.sha256(data).hexdigest()))
    return pins


FILES = {"charts/values.yaml": b"replicas: 1\n", "crds/widget.yaml": b"kind: CustomResource\n"}


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_fetch_puts_every_pinned_file_in_place(served, tmp_path: Path):
    root, url = served
    pins = serve(root, FILES)
    dest = tmp_path / "cache" / "reference"
    assert fetch(dest, pins, mirror=url) == list(FILES)
    assert tree(dest) == FILES
    # present and matching: nothing is downloaded again, even with the server gone
    assert fetch(dest, pins, mirror="http://127.0.0.1:9") == []


def test_a_file_not_matching_its_pin_is_refused_and_nothing_written(served, tmp_path: Path):
    root, url = served
    pins = serve(root, FILES)
    dest = tmp_path / "cache" / "reference"
    fetch(dest, pins[:1], mirror=url)
    before = tree(dest)
    (root / pins[1].url[len(RAW) :]).write_bytes(b"kind: Tampered\n")
    with pytest.raises(
        FetchError, match=r"crds/widget.yaml: sha256 [0-9a-f]{64} is not the pinned"
    ):
        fetch(dest, pins, mirror=url)
    assert tree(dest) == before
    assert [p.name for p in dest.parent.iterdir()] == ["reference"]  # no scratch left
    fresh = tmp_path / "fresh" / "reference"
    with pytest.raises(FetchError, match="nothing was written"):
        fetch(fresh, pins, mirror=url)
    assert not fresh.exists()


def test_a_missing_file_names_its_url(served, tmp_path: Path):
    root, url = served
    pins = serve(root, FILES)
    (root / pins[0].url[len(RAW) :]).unlink()
    with pytest.raises(
        FetchError, match=r"^http://127\.0\.0\.1:\d+/acme/.*/charts/values.yaml: HTTP 404"
    ):
        fetch(tmp_path / "reference", pins, mirror=url)


def test_an_unreachable_server_is_one_line_and_exit_2(tmp_path: Path, capsys):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dest = tmp_path / "reference"
    code = reference.main(["fetch", "--dest", str(dest), "--mirror", f"http://127.0.0.1:{port}"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(f"python -m tests.reference: error: cannot reach 127.0.0.1:{port} (")
    assert err.endswith("; nothing was written\n")
    assert err.count("\n") == 1
    assert not dest.exists()


def test_the_tests_look_in_the_named_folder_else_shared_then_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("GPU_GITOPS_REFERENCE", raising=False)
    assert reference.candidates() == [
        reference.REPO_ROOT.parent / "shared" / "reference",
        tmp_path / "xdg" / "gpu-gitops" / "reference",
    ]
    monkeypatch.setenv("GPU_GITOPS_REFERENCE", str(tmp_path / "mine"))
    assert reference.candidates() == [tmp_path / "mine"]
    assert reference.find() is None  # a folder counts only with every pinned file


def test_the_pins_are_the_reference_files(reference_dir: Path, served, tmp_path: Path):
    """Every file the tests may read is pinned with its sha256, and fetch brings them all."""
    files = {
        p.relative_to(reference_dir).as_posix()
        for p in reference_dir.rglob("*")
        if p.is_file() and p.name != "SOURCES.md"
    }
    assert {pin.local for pin in PINNED} == files
    root, url = served
    for pin in PINNED:
        target = root / pin.url[len(RAW) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(reference_dir / pin.local, target)
    dest = tmp_path / "cache" / "reference"
    assert sorted(fetch(dest, mirror=url)) == sorted(files)
    assert tree(dest) == {local: (reference_dir / local).read_bytes() for local in files}


@pytest.mark.parametrize(("required", "code", "says"), [("", 0, "1 skipped"), ("1", 1, "1 error")])
def test_ci_turns_a_skip_for_want_of_the_reference_files_into_a_failure(
    tmp_path: Path, required: str, code: int, says: str
):
    """GPU_GITOPS_REQUIRE_REFERENCE=1 (.ci/run): a run without the files cannot pass green."""
    env = {
        **os.environ,
        "GPU_GITOPS_REFERENCE": str(tmp_path / "empty"),
        "GPU_GITOPS_REQUIRE_REFERENCE": required,
    }
    test = "tests/test_reference.py::test_the_pins_are_the_reference_files"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
        cwd=reference.REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == code, done.stdout
    assert says in done.stdout.splitlines()[-1]
    assert "needs the upstream reference files" in done.stdout
    assert ("GPU_GITOPS_REQUIRE_REFERENCE=1: this run must not skip it" in done.stdout) is bool(
        required
    )
