"""Debian's headless Chromium (/usr/bin/chromium): a page's screenshot as pixels and its DOM
after its scripts ran. Tests use the `chromium` fixture (tests/conftest.py), which skips, naming
the package, where it is absent (`apt-get install chromium`; .ci/run installs it)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

__all__ = ["BINARY", "Chromium"]

BINARY = shutil.which("chromium") or shutil.which("chromium-browser")
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"]


class Chromium:
    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir

    def _run(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        profile = self.workdir / "profile"
        return subprocess.run(
            [self.binary, *_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            timeout=120,
            check=True,
        )

    def dom(self, url: str) -> str:
        """The page's DOM, serialized after load and its scripts (--dump-dom needs them on)."""
        return self._run("--dump-dom", url).stdout.decode()

    def screenshot(self, url: str, width: int = 1600, height: int = 1200) -> list[list[bytes]]:
        """The page's pixels, rows of RGB triples."""
        png = self.workdir / "shot.png"
        self._run(f"--window-size={width},{height}", f"--screenshot={png}", url)
        return decode_png(png.read_bytes())


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def decode_png(data: bytes) -> list[list[bytes]]:
    """8-bit RGB or RGBA, non-interlaced (what Chromium writes): rows of RGB triples."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[list[bytes]] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        flt, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if flt == 1:
                line[i] = (line[i] + a) & 255
            elif flt == 2:
                line[i] = (line[i] + b) & 255
            elif flt == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif flt == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 255
        rows.append([bytes(line[x : x + 3]) for x in range(0, stride, channels)])
        prev = line
    return rows
