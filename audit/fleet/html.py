"""The fleet as one self-contained HTML page: what an SRE opens in a browser or a CI job keeps as
an artifact. Pure. No external font, script, style or image: a Content-Security-Policy lets the
page load nothing and run only its own inline script (by hash), which sorts a table by a click
on a header or by the URL's `#sort=COLUMN[-desc]`. With scripts off the tables read the same,
worst news first. Every value is escaped (`html_text`): label values are anyone's who can push.
"""

from __future__ import annotations

import base64
import hashlib

from kubedata.text import html_text

from audit.findings.finding import SEVERITIES
from audit.fleet.model import STATUSES, ClusterAudit, Fleet, FleetFinding
from audit.fleet.words import age, iso, reverts, status_text

__all__ = ["SEVERITY_COLOURS", "STATUS_COLOURS", "render_html"]

SEVERITY_COLOURS = {"high": "#c62828", "medium": "#ef6c00", "low": "#f9a825", "info": "#1565c0"}
"""Background of a severity cell (and of a count above 0)."""
STATUS_COLOURS = {
    "missing": "#6a1b9a",
    "incomplete": "#ad1457",
    "drift": "#e65100",
    "clean": "#2e7d32",
}
_FINDING_COLUMNS = (
    "cluster", "severity", "id", "type", "object", "path", "set by", "at", "reverts", "keep it",
)  # fmt: skip
_SCRIPT = """\
(function () {
  function sortBy(table, col, desc) {
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var a = x.cells[col].getAttribute("data-sort") || x.cells[col].textContent;
      var b = y.cells[col].getAttribute("data-sort") || y.cells[col].textContent;
      var n = parseFloat(a) - parseFloat(b), r = isNaN(n) ? a.localeCompare(b) : n;
      return desc ? -r : r;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    table.querySelectorAll("th").forEach(function (th, i) {
      th.setAttribute("aria-sort", i === col ? (desc ? "descending" : "ascending") : "none");
    });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        sortBy(table, col, th.getAttribute("aria-sort") === "ascending");
      });
    });
  });
  var m = /^#sort=(\\d+)(-desc)?$/.exec(location.hash);
  if (m) {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      if (+m[1] < table.querySelectorAll("th").length) sortBy(table, +m[1], !!m[2]);
    });
  }
})();
"""
_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#212121;background:#fff}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #bdbdbd;padding:.3em .6em;text-align:left;vertical-align:top}"
    "th{background:#eeeeee;cursor:pointer}td.n{text-align:right}"
    "code{font-family:ui-monospace,monospace;user-select:all;word-break:break-all}"
    + "".join(
        f".sev-{s}{{background:{c};color:#fff;font-weight:bold}}"
        for s, c in SEVERITY_COLOURS.items()
    )
    + "".join(
        f".st-{s}{{background:{c};color:#fff;font-weight:bold}}" for s, c in STATUS_COLOURS.items()
    )
)


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode()).digest()).decode()
    return f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"


def _cell(text: str, cls: str = "", sort: str | None = None) -> str:
    attrs = (f' class="{cls}"' if cls else "") + (
        f' data-sort="{sort}"' if sort is not None else ""
    )
    return f"<td{attrs}>{text}</td>"


def _cluster_row(c: ClusterAudit, at: float) -> str:
    seconds = str(int(at - c.last_audit)) if c.last_audit else "1e12"
    cells = [
        _cell(html_text(c.name)),
        _cell(html_text(c.status), f"st-{c.status}", str(STATUSES.index(c.status))),
        _cell(html_text(status_text(c, at))),
        _cell(iso(c.last_audit), sort=f"{c.last_audit or 0:.0f}"),
        _cell(age(c.last_audit, at), "n", seconds),
    ]
    cells += [
        _cell(str(c.counts[s]), f"n sev-{s}" if c.counts[s] else "n", str(c.counts[s]))
        for s in SEVERITIES
    ]
    cells.append(_cell(str(c.omitted), "n"))
    return "<tr>" + "".join(cells) + "</tr>"


def _finding_row(f: FleetFinding) -> str:
    rank = SEVERITIES.index(f.severity) if f.severity in SEVERITIES else len(SEVERITIES)
    cls = f"sev-{f.severity}" if f.severity in SEVERITIES else ""
    who = html_text(f.manager or "unknown")
    return (
        "<tr>"
        + "".join(
            [
                _cell(html_text(f.cluster)),
                _cell(html_text(f.severity), cls, str(rank)),
                _cell(f"<code>{html_text(f.id)}</code>"),
                _cell(html_text(f.type)),
                _cell(html_text(f.object)),
                _cell(f"<code>{html_text(f.path)}</code>"),
                _cell(who),
                _cell(iso(f.changed), sort=f"{f.changed:.0f}"),
                _cell(html_text(reverts(f.revert))),
                _cell(f"<code>{html_text(f.adopt)}</code>"),
            ]
        )
        + "</tr>"
    )


def _head(*names: str) -> str:
    return "<thead><tr>" + "".join(f"<th>{n}</th>" for n in names) + "</tr></thead>"


def render_html(fleet: Fleet) -> str:
    counts = ", ".join(f"{n} {s}" for s, n in fleet.by_status().items() if n)
    title = f"gpu-gitops fleet at {iso(fleet.at)}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        f"<p>{len(fleet.clusters)} clusters" + (f" ({counts})" if counts else "") + "</p>",
        '<table class="sortable" id="clusters">',
        _head("cluster", "status", "why", "last audit", "age", *SEVERITIES, "omitted"),
        "<tbody>",
        *(_cluster_row(c, fleet.at) for c in fleet.clusters),
        "</tbody></table>",
        f"<h2>Findings at or above {html_text(fleet.min_severity)}</h2>",
        '<table class="sortable" id="findings">',
        _head(*_FINDING_COLUMNS),
        "<tbody>",
        *(_finding_row(f) for f in fleet.findings()),
        "</tbody></table>",
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
