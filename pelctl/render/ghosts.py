"""Rows, JSON and the summary line of ``pelctl ghosts``: ``GHOSTS`` (the listing) and
``COUNTS`` (``--count``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.ghosts import Ghost, GhostStats
from pelctl.render.protocol import Pairs, Part, ResultRenderer, Rows
from pelctl.render.table import Column

# Narrow terminals: the deliveries go first; the consumer's name and the reason are
# shortened; ids stay.
COLUMNS = (
    Column("id", "ID"),
    Column("consumer", "CONSUMER", shrinkable=True, min_width=12),
    Column("idle", "IDLE", "right"),
    Column("deliveries", "DELIVERIES", "right", priority=1),
    Column("reason", "REASON", shrinkable=True, min_width=12),
)


def row(g: Ghost) -> tuple[str, ...]:
    return (
        g.id.decode(),
        escape(g.consumer),
        format_duration_ms(g.idle_ms),
        str(g.deliveries),
        g.reason,
    )


def to_json(g: Ghost) -> dict[str, Any]:
    return {
        "id": g.id.decode(),
        "consumer": escape(g.consumer),
        "idle_ms": g.idle_ms,
        "deliveries": g.deliveries,
        "reason": g.reason,
    }


def row_style(g: Ghost) -> str | None:
    return "red" if g.reason == "deleted" else "yellow"


GHOSTS = Rows(COLUMNS, row, to_json, row_style)


def summary(stats: GhostStats, shown: int, limit: int | None) -> str:
    """The listing's footer: what was found and what was checked."""
    b = stats.bounds
    if limit is not None and shown >= limit:
        head = f"showing the first {shown:,} ghosts (--limit)"
    else:
        head = (
            f"{stats.ghosts:,} ghost{'s' if stats.ghosts != 1 else ''} "
            f"({stats.trimmed:,} trimmed, {stats.deleted:,} deleted)"
        )
    if b is None:
        return head
    if b.first_id is None:
        return f"{head}; the stream is empty, so every pending entry is a ghost"
    if stats.checked_to is None:
        scope = (
            f"no entry was ever deleted with XDEL (max-deleted-entry-id "
            f"{(b.max_deleted_id or b'-').decode()}), so only trimmed entries can be ghosts"
        )
    elif stats.full:
        scope = f"checked every entry from the first id {b.first_id.decode()}"
    else:
        scope = (
            f"checked entries from the first id {b.first_id.decode()} up to "
            f"max-deleted-entry-id {stats.checked_to.decode()} (--full checks all)"
        )
    return f"{head}; {scope}"


class CountsRenderer(ResultRenderer[GhostStats]):
    """``pelctl ghosts --count``: ``{"ghosts", "trimmed", "deleted"}``, as label/value
    lines in text (and CSV)."""

    def document(self, result: GhostStats) -> dict[str, int]:
        return {"ghosts": result.ghosts, "trimmed": result.trimmed, "deleted": result.deleted}

    def view(self, result: GhostStats, width: int) -> Iterable[Part]:
        return (Pairs([(k, f"{v:,}") for k, v in self.document(result).items()]),)


COUNTS = CountsRenderer()
