"""`fleet -o html` from the real Prometheus, opened in Debian's headless Chromium: the screenshot
shows the tables in their severity colours, the DOM holds both tables (sorted by the page's own
script from `#sort=`, worst first with scripts off), and hostile label values stay text: no
element, attribute or script of theirs in the rendered DOM."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from audit.fleet.html import SEVERITY_COLOURS, STATUS_COLOURS
from tests.audit.audit_helpers import run
from tests.audit.fleet.fleet_data import HOSTILE, PushedFleet
from tests.chromium import Chromium


class Dom(HTMLParser):
    """Tags, and the text of each row of each table (by id)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.rows: dict[str, list[list[str]]] = {}
        self._table = ""
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        if tag == "table":
            self._table = dict(attrs).get("id") or ""
        elif tag == "tr":
            self.rows.setdefault(self._table, []).append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[self._table][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def page(fleet: PushedFleet, tmp_path: Path, scripts: bool = True) -> Path:
    """The page `fleet -o html` prints; `scripts` False: its policy refuses every script, so
    Chromium shows it as a browser with JavaScript off does (headless Chromium's own
    scriptEnabled=false also stops --dump-dom and --screenshot)."""
    code, out, err = run(
        "fleet", "--prometheus", fleet.prometheus.url, "--at", f"{fleet.night2:.3f}", "-o", "html"
    )
    assert code == 1, err
    if not scripts:
        out, n = re.subn(r"script-src '[^']*'", "script-src 'none'", out)
        assert n == 1
    path = tmp_path / ("fleet.html" if scripts else "fleet-no-scripts.html")
    path.write_text(out, encoding="utf-8")
    return path


def parse(dom: str) -> Dom:
    parser = Dom()
    parser.feed(dom)
    return parser


def rgb(colour: str) -> bytes:
    return bytes.fromhex(colour[1:])


@pytest.mark.parametrize("scripts", [True, False], ids=["scripts", "no-scripts"])
def test_screenshot_shows_the_tables_in_severity_colours(
    fleet: PushedFleet, chromium: Chromium, tmp_path: Path, scripts: bool
) -> None:
    shot = chromium.screenshot(page(fleet, tmp_path, scripts).as_uri())
    pixels = Counter(p for row in shot for p in row)
    # each severity cell is a solid block of its colour, ~30 x 20 px at the least; a severity
    # no cluster has (low, since fra1's night 2) colours nothing
    for severity in ("high", "medium"):
        assert pixels[rgb(SEVERITY_COLOURS[severity])] > 400, severity
    assert pixels[rgb(SEVERITY_COLOURS["low"])] == 0
    for status in ("missing", "incomplete", "drift", "clean"):
        assert pixels[rgb(STATUS_COLOURS[status])] > 400, status
    assert pixels[b"\xff\xff\xff"] > 100_000, "a white page behind the tables"


def test_the_dom_sorts_and_reads_without_scripts(
    fleet: PushedFleet, chromium: Chromium, tmp_path: Path
) -> None:
    url = page(fleet, tmp_path).as_uri()
    plain = parse(chromium.dom(page(fleet, tmp_path, scripts=False).as_uri() + "#sort=0"))
    names = [r[0] for r in plain.rows["clusters"] if r]
    assert names[:2] == ["old1", "par1"] and names[-1] == "ber1", "worst first without scripts"
    assert plain.tags["table"] == 2
    by_name = parse(chromium.dom(url + "#sort=0"))
    assert [r[0] for r in by_name.rows["clusters"] if r] == sorted(names)
    by_age = parse(chromium.dom(url + "#sort=4-desc"))
    assert next(r[0] for r in by_age.rows["clusters"] if r) == "old1"
    findings = [r for r in plain.rows["findings"] if r]
    dcgm = fleet.night2_ids["fra1"][0]
    (row,) = [r for r in findings if r[2] == dcgm]
    assert row[9] == f"gpu-gitops adopt --cluster fra1 --finding {dcgm}"
    assert row[6] == "kubectl-edit" and row[7] == "2026-11-30T03:01:02Z"


def test_hostile_label_values_are_inert(
    fleet: PushedFleet, chromium: Chromium, tmp_path: Path
) -> None:
    dom = parse(chromium.dom(page(fleet, tmp_path).as_uri()))
    assert dom.tags["img"] == 0 and dom.tags["script"] == 1 and dom.tags["b"] == 0
    cells = [c for r in dom.rows["findings"] for c in r]
    assert f"/spec/{HOSTILE}" in cells, "shown as text, whole"
    assert HOSTILE in cells
