"""A group's lag as what it can still read, and what a trim removed before it read it
(:class:`pelctl.core.models.UnreadLoss`): the cells, the line and the JSON that ``inspect``,
``streams`` and the dashboard share (docs/trim.md)."""

from __future__ import annotations

from typing import Any

from pelctl.core.models import UnreadLoss
from pelctl.render.table import fmt_int


def lag_cell(lag: int | None, readable: int | None) -> str:
    """What the group can still read; the server's lag when pelctl could not tell more."""
    return fmt_int(readable if readable is not None else lag)


def loss_cell(loss: UnreadLoss | None) -> str:
    """``400``; ``≥399`` (a lower bound); ``?`` (some, count unknown); ``-`` (none seen)."""
    if loss is None:
        return "-"
    if loss.count is None:
        return "?"
    return fmt_int(loss.count) if loss.exact else f"≥{fmt_int(loss.count)}"


def loss_json(loss: UnreadLoss | None) -> dict[str, Any] | None:
    """``{"count": 400, "exact": true, "cause": "trimmed"}`` (count null: unknown)."""
    if loss is None:
        return None
    return {"count": loss.count, "exact": loss.exact, "cause": loss.cause}


def lag_line(name: str, lag: int | None, readable: int | None, loss: UnreadLoss) -> str:
    """``slow: lag 900 (the server's count) → 500 readable, 400 lost to trimming before it
    read them`` (``name`` already escaped; the server's count only where it differs: Redis
    8.2+ counts only what is left once the group's position is below the first entry)."""
    how = "trimming" if loss.cause == "trimmed" else "trimming or XDEL"
    if loss.count is None:
        lost = f"some lost to {how} before it read them (how many is not known)"
    else:
        least = "" if loss.exact else "at least "
        lost = f"{least}{fmt_int(loss.count)} lost to {how} before it read them"
    differs = lag is not None and lag != readable
    server = f"lag {fmt_int(lag)} (the server's count) → " if differs else ""
    can = f"{fmt_int(readable)} readable" if readable is not None else "readable: not known"
    return f"{name}: {server}{can}, {lost}"
