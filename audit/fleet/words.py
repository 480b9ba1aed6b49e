"""How the fleet's reports say times, ages, reverts and a cluster's status: shared by report.py
and html.py. Pure."""

from __future__ import annotations

import datetime as dt

from audit.fleet.model import ClusterAudit

__all__ = ["age", "iso", "reverts", "status_text"]

_REVERTS = {
    "next-reconcile": "reverted at the next reconcile",
    "next-upgrade": "reverted at the next upgrade of its release",
    "never": "nothing reverts it",
    "unknown": "unknown whether anything reverts it",
}


def iso(ts: float | None) -> str:
    if not ts:
        return "unknown"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def age(ts: float | None, at: float) -> str:
    """How long before `at`, in the two largest units ("2d 13h", "5h 02m", "42m")."""
    if ts is None:
        return "never"
    minutes = max(0, int(at - ts) // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    return f"{hours}h {mins:02d}m" if hours else f"{mins}m"


def reverts(revert: str) -> str:
    return _REVERTS.get(revert, f"revert {revert}")


def status_text(c: ClusterAudit, at: float) -> str:
    """Why the cluster is where it is in the list."""
    if c.status == "missing":
        if c.last_success is None:
            return "audit missing: no complete audit ever pushed"
        return f"audit missing: last complete audit {age(c.last_success, at)} ago"
    if c.status == "incomplete":
        problems = (
            f" ({c.problems} read{'s' if c.problems != 1 else ''} failed)" if c.problems else ""
        )
        return f"audit incomplete{problems}; findings are those of the last complete audit"
    return f"{c.total} finding{'s' if c.total != 1 else ''}" if c.total else "clean"
