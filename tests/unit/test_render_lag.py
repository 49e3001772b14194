"""pelctl/render/lag.py: a group's lag as what it can still read, and what trims lost."""

from __future__ import annotations

from pelctl.core.models import UnreadLoss
from pelctl.render import lag


def test_cells() -> None:
    assert lag.lag_cell(900, 500) == "500"  # what it can still read
    assert lag.lag_cell(900, None) == "900"  # the server's count, when nothing better
    assert lag.lag_cell(None, None) == "-"
    assert lag.loss_cell(None) == "-"
    assert lag.loss_cell(UnreadLoss(1_400)) == "1,400"
    assert lag.loss_cell(UnreadLoss(399, exact=False)) == "≥399"
    assert lag.loss_cell(UnreadLoss(None, exact=False)) == "?"


def test_json() -> None:
    assert lag.loss_json(None) is None
    assert lag.loss_json(UnreadLoss(3, False, "trimmed-or-deleted")) == {
        "count": 3,
        "exact": False,
        "cause": "trimmed-or-deleted",
    }


def test_lines() -> None:
    assert lag.lag_line("slow", 900, 500, UnreadLoss(400)) == (
        "slow: lag 900 (the server's count) → 500 readable, 400 lost to trimming before it "
        "read them"
    )
    # Redis 8.2+ already counts only what is left: the server's count is not repeated
    assert lag.lag_line("slow", 500, 500, UnreadLoss(400)) == (
        "slow: 500 readable, 400 lost to trimming before it read them"
    )
    assert lag.lag_line("g", 599, None, UnreadLoss(99, exact=False)) == (
        "g: lag 599 (the server's count) → readable: not known, at least 99 lost to "
        "trimming before it read them"
    )
    assert lag.lag_line("g", None, 10, UnreadLoss(None, False, "trimmed-or-deleted")) == (
        "g: 10 readable, some lost to trimming or XDEL before it read them (how many is not known)"
    )
