"""How old a sampled part is, in words and in JSON (the dashboard, ``--watch`` frames, the
exporter): "idle histogram from 18s ago: a full scan of this PEL costs 1.1s of server time;
next in 4s". See docs/server-budget.md."""

from __future__ import annotations

from typing import Any

from pelctl.base.durations import format_duration_ms
from pelctl.base.shares import format_share
from pelctl.core.budget import Freshness


def _ms(seconds: float) -> str:
    return format_duration_ms(int(round(seconds * 1000)))


def _cost(ms: float) -> str:
    return format_duration_ms(max(int(round(ms)), 1)) if ms >= 1 else "under 1ms"


def age(f: Freshness) -> str:
    """``from 18s ago`` (``not yet``: never ran)."""
    if f.age_s is None:
        return "not yet"
    if f.refreshed or f.age_s < 0.5:
        return "just now"
    return f"from {_ms(f.age_s)} ago"


def next_run(f: Freshness) -> str:
    """``next in 4s`` / ``next at the next refresh``."""
    if f.next_in_s <= f.interval_s:
        return "next at the next refresh"
    return f"next in {_ms(f.next_in_s)}"


def note(f: Freshness) -> str:
    """The whole sentence: what, how old, what a run costs the server, when the next one
    runs."""
    text = f"{f.part} {age(f)}"
    if f.cost_ms is not None:
        text += f": a full scan of this PEL costs {_cost(f.cost_ms)} of server time"
    return f"{text}; {next_run(f)}"


def short(f: Freshness) -> str:
    """``from 18s ago · next in 4s`` (a table's subtitle)."""
    return f"{age(f)} · {next_run(f)}"


def share_note(used: float, max_share: float) -> str:
    """``server 3.1% of 5%``: the share of the server's time used, and the most allowed
    (the dashboard's status bar, the ``--watch`` header)."""
    return f"server {format_share(used)} of {format_share(max_share)}"


def to_json(f: Freshness) -> dict[str, Any]:
    """The ``sampled`` object of the JSON outputs (docs/schemas/common.json)."""
    return {
        "part": f.part,
        "age_ms": None if f.age_s is None else int(round(f.age_s * 1000)),
        "server_ms": None if f.cost_ms is None else round(f.cost_ms, 3),
        "next_in_ms": int(round(f.next_in_s * 1000)),
        "every_ms": int(round(f.every_s * 1000)),
    }
