"""Rows and JSON for ``pelctl streams`` (the dashboard's streams view too): ``STREAMS``."""

from __future__ import annotations

from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.models import StreamSummary
from pelctl.render.lag import lag_cell, loss_cell, loss_json
from pelctl.render.protocol import Listing, Rows
from pelctl.render.table import Column, fmt_int

# When the terminal is narrow (docs/output.md): KIND, then GROUPS, LENGTH and LAG go; the
# name is shortened; what is stuck and since when (PENDING, OLDEST PENDING) stays, and so
# do entries a trim removed before a group read them (LOST).
# LAG is what the groups can still read (docs/trim.md); LOST what trims removed unread.
COLUMNS = (
    Column("stream", "STREAM", shrinkable=True, min_width=16),
    Column("length", "LENGTH", "right", priority=2),
    Column("groups", "GROUPS", "right", priority=3),
    Column("pending", "PENDING", "right"),
    Column("lag", "LAG", "right", priority=1),
    Column("lost", "LOST", "right"),
    Column("oldest_pending", "OLDEST PENDING", "right"),
    Column("kind", "KIND", priority=4),
)


def row(s: StreamSummary) -> tuple[str, ...]:
    return (
        escape(s.stream),
        fmt_int(s.length),
        str(s.groups),
        fmt_int(s.pending),
        lag_cell(s.lag, s.readable),
        loss_cell(s.trimmed_unread),
        format_duration_ms(s.oldest_pending_age_ms),
        "dlq" if s.is_dlq else "stream",
    )


def row_style(s: StreamSummary) -> str | None:
    if s.trimmed_unread is not None:
        return "red"
    if s.oldest_pending_age_ms is not None and s.oldest_pending_age_ms > 3_600_000:
        return "red"
    if s.pending:
        return "yellow"
    return None


def to_json(s: StreamSummary) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stream": escape(s.stream),
        "length": s.length,
        "group_count": s.groups,
        "pending": s.pending,
        "lag": s.lag,
        "readable": s.readable,
        "trimmed_unread": loss_json(s.trimmed_unread),
        "oldest_pending_age_ms": s.oldest_pending_age_ms,
        "is_dlq": s.is_dlq,
    }
    if s.node is not None:
        out["node"] = s.node
    return out


STREAMS = Rows(COLUMNS, row, to_json, row_style)
# ``pelctl streams``: every stream, shown whole (sorted by name by the command).
LISTING = Listing(STREAMS, empty="no streams found")
