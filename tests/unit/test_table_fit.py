"""Fitting a table to a terminal's width (pelctl.render.table.fit): which columns go, which
text is shortened, and that numbers and ids are never cut."""

from __future__ import annotations

import pytest

from pelctl.render.table import Column, fit, natural_widths

# dlq list's columns, as the renderer declares them (with the priorities it ships).
from pelctl.render.dlq import ENTRY_COLUMNS as DLQ_COLUMNS  # isort: skip

GAP = 2


def _headers(layout, columns) -> list[str]:
    return [columns[i].header for i in layout.keep]


def test_a_table_that_fits_is_left_whole() -> None:
    cols = (Column("a", "A"), Column("b", "B", priority=3), Column("c", "C", shrinkable=True))
    layout = fit(cols, [10, 20, 30], 200, gap=GAP)
    assert layout.keep == (0, 1, 2) and layout.widths == (10, 20, 30) and layout.fits


def test_highest_priority_number_goes_first_and_ties_from_the_right() -> None:
    cols = (
        Column("id", "ID"),
        Column("x", "X", priority=1),
        Column("y", "Y", priority=2),
        Column("z", "Z", priority=2),
        Column("n", "N"),
    )
    natural = [15, 10, 10, 10, 10]  # 55 + 4 gaps of 2 = 63
    assert _headers(fit(cols, natural, 62, gap=GAP), cols) == ["ID", "X", "Y", "N"]
    assert _headers(fit(cols, natural, 50, gap=GAP), cols) == ["ID", "X", "N"]
    assert _headers(fit(cols, natural, 39, gap=GAP), cols) == ["ID", "X", "N"]
    assert _headers(fit(cols, natural, 38, gap=GAP), cols) == ["ID", "N"]


def test_priority_zero_is_never_dropped_and_numbers_are_never_cut() -> None:
    cols = (Column("id", "ID"), Column("count", "COUNT", "right"), Column("x", "X", priority=1))
    layout = fit(cols, [15, 9, 5], 20, gap=GAP)
    assert layout.keep == (0, 1) and layout.widths == (15, 9)
    assert not layout.fits  # 26 > 20: shown whole all the same (the terminal wraps)


def test_text_is_shortened_before_a_column_is_dropped_but_not_below_its_floor() -> None:
    cols = (
        Column("id", "ID"),
        Column("name", "NAME", shrinkable=True, min_width=12),
        Column("extra", "EXTRA", priority=1),
    )
    # 15 + 40 + 10 + 4 = 69: shortening the name to 26 is enough, EXTRA stays.
    layout = fit(cols, [15, 40, 10], 55, gap=GAP)
    assert layout.keep == (0, 1, 2) and layout.widths == (15, 26, 10)
    # Not even the name at its floor (12) leaves room for EXTRA: it goes, the name grows back.
    layout = fit(cols, [15, 40, 10], 35, gap=GAP)
    assert layout.keep == (0, 1) and layout.widths == (15, 18) and layout.width(GAP) == 35


def test_low_value_text_is_shortened_first_and_the_widest_of_equals_first() -> None:
    cols = (
        Column("source", "SOURCE", shrinkable=True, min_width=10),
        Column("reason", "REASON", shrinkable=True, min_width=10),
        Column("fields", "FIELDS", priority=2, shrinkable=True, min_width=16),
    )
    natural = [30, 50, 80]
    layout = fit(cols, natural, 110, gap=GAP)  # 160 + 4: 54 cells to save
    assert layout.widths == (30, 50, 26)  # FIELDS (low value) gives them all
    layout = fit(cols, natural, 80, gap=GAP)  # FIELDS at 16, then 20 more from the others
    assert layout.widths[2] == 16
    assert layout.widths[:2] == (30, 30)  # the widest (REASON) first, to one level
    assert layout.width(GAP) == 80


def test_when_nothing_is_left_to_drop_text_goes_below_its_floor_down_to_its_header() -> None:
    cols = (Column("id", "ID"), Column("reason", "REASON", shrinkable=True, min_width=24))
    layout = fit(cols, [15, 40], 30, gap=GAP)
    assert layout.widths == (15, 13) and layout.fits
    layout = fit(cols, [15, 40], 20, gap=GAP)
    assert layout.widths == (15, 6) and not layout.fits  # never narrower than "REASON"


@pytest.mark.parametrize("width", range(40, 240, 7))
def test_every_width_between_fits_exactly_or_is_left_whole(width: int) -> None:
    natural = [15, 40, 15, 30, 5, 45, 6, 80]
    layout = fit(DLQ_COLUMNS, natural, width, gap=GAP)
    total = layout.width(GAP)
    assert total <= width or not layout.fits
    for i, w in zip(layout.keep, layout.widths, strict=True):
        if not DLQ_COLUMNS[i].shrinkable:
            assert w == natural[i], f"{DLQ_COLUMNS[i].header} cut at {width}"
        assert w <= natural[i]
    if sum(natural) + GAP * (len(natural) - 1) > width and layout.fits:
        assert total == width or len(layout.keep) < len(natural)


def test_natural_widths_measure_cells() -> None:
    cols = (Column("a", "A"), Column("b", "LONG HEADER"))
    assert natural_widths(cols, [("xyz", "b"), ("x", "bb")]) == [3, 11]
    double = natural_widths(cols, [("日本", "")], measure=lambda s: 2 * len(s))
    assert double == [4, 22]
