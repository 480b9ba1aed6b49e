"""Writes replace whole directories, or change nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from renderer.errors import ProfileError, WriteError
from renderer.write import file_digest, stale_digests, stale_files, write_dirs


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_write_replaces_directories_and_prunes_stale_files(tmp_path: Path):
    (tmp_path / "overlays" / "a").mkdir(parents=True)
    (tmp_path / "overlays" / "a" / "old.yaml").write_text("old\n")
    changed = write_dirs(tmp_path, {"overlays/a": {"k.yaml": "new\n"}, "overlays/b": {"x": "1\n"}})
    assert changed == ["overlays/a", "overlays/b"]
    assert _tree(tmp_path) == {"overlays/a/k.yaml": b"new\n", "overlays/b/x": b"1\n"}
    assert write_dirs(tmp_path, {"overlays/a": {"k.yaml": "new\n"}}) == []


def test_stale_files_names_changed_missing_and_extra(tmp_path: Path):
    write_dirs(tmp_path, {"d": {"same": "1", "changed": "1", "extra": "1"}})
    assert stale_files(tmp_path, {"d": {"same": "1", "changed": "2", "missing": "1"}}) == [
        "d/changed",
        "d/extra",
        "d/missing",
    ]


def test_a_failed_write_leaves_every_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_dirs(tmp_path, {"a": {"f": "old-a"}, "b": {"f": "old-b"}})
    before = _tree(tmp_path)
    calls = {"n": 0}
    real = Path.write_text

    def flaky(self: Path, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", flaky)
    with pytest.raises(WriteError, match="No space left on device; nothing was changed"):
        write_dirs(tmp_path, {"a": {"f": "new-a"}, "b": {"f": "new-b"}})
    assert _tree(tmp_path) == before, "no file changed and no staging directory left behind"


def test_stale_digests_finds_what_stale_files_finds(tmp_path: Path):
    """Changed, missing, extra, nested, a link and a FIFO where a file goes: render --check
    compares digests (from the cache) and must name exactly what the texts would."""
    wanted = {"d": {"same": "1", "changed": "2", "missing": "1", "link": "1", "fifo": "1"}}
    write_dirs(tmp_path, {"d": {"same": "1", "changed": "1", "sub/deep": "1"}})
    (tmp_path / "d" / "link").symlink_to("same")
    os.mkfifo(tmp_path / "d" / "fifo")
    (tmp_path / "d" / "sublink").symlink_to("sub")
    digests = {d: {f: file_digest(t.encode()) for f, t in fs.items()} for d, fs in wanted.items()}
    expected = ["d/changed", "d/fifo", "d/link", "d/missing", "d/sub/deep", "d/sublink"]
    assert stale_files(tmp_path, wanted) == expected
    assert stale_digests(tmp_path, digests) == expected
    absent = {"e": {"f": file_digest(b"1")}}
    assert stale_digests(tmp_path, absent) == stale_files(tmp_path, {"e": {"f": "1"}}) == ["e/f"]


def test_a_generated_folder_that_is_a_link_is_refused_by_both(tmp_path: Path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "overlays").symlink_to("elsewhere")
    for stale in (stale_files, stale_digests):
        with pytest.raises(ProfileError, match=r"^overlays: .*symbolic link"):
            stale(tmp_path, {"overlays/a": {"f": "x"}})
