"""A UI-neutral table: columns with keys, headers and alignment; rows of display strings.

Each column also says how it gives way when a terminal is too narrow for the whole table
(:func:`fit`, used by the ``table`` output on a terminal; ``plain``, ``markdown`` and the
machine formats always keep every column, whole):

- ``priority``: 0 (the default) is never dropped; columns with a higher number are dropped
  first, the highest first (as kubectl's ``priority`` on printer columns: 0 is the
  standard view, higher is "wide" only);
- ``shrinkable``: long text (names, reasons, notes, payloads) may be shortened with ``…``,
  down to ``min_width`` before any column is dropped for it (and below, down to its header,
  only when nothing is left to drop). Other columns (counts, ids, durations) are never
  cut: a number is shown whole or its column is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Justify = Literal["left", "right"]


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    header: str
    justify: Justify = "left"
    style: str | None = None  # rich style string, applied by rich and textual alike
    priority: int = 0  # 0: always shown; higher numbers are dropped first when too wide
    shrinkable: bool = False  # text that may be shortened with an ellipsis
    min_width: int = 10  # a shrinkable column is cut to this before others are dropped


@dataclass(frozen=True)
class TableData:
    columns: tuple[Column, ...]
    rows: Sequence[tuple[str, ...]] = field(default_factory=list)
    title: str | None = None
    row_styles: list[str | None] = field(default_factory=list)
    caption: str | None = None

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.columns]


def fmt_int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


# -- fitting a table to a width ----------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Which columns to show (indexes into the table's columns, in order) and how wide each
    is; ``fits`` is False when even the narrowest layout is wider than asked (the columns
    that can never be cut are too wide for the terminal)."""

    keep: tuple[int, ...]
    widths: tuple[int, ...]
    fits: bool

    def width(self, gap: int) -> int:
        return sum(self.widths) + gap * max(0, len(self.widths) - 1)


def natural_widths(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    measure: Callable[[str], int] = len,
) -> list[int]:
    """The width each column needs to show every cell and its header whole."""
    widths = [measure(c.header) for c in columns]
    for row in rows:
        for i, cell in enumerate(row[: len(widths)]):
            n = measure(cell)
            if n > widths[i]:
                widths[i] = n
    return widths


def fit(
    columns: Sequence[Column],
    natural: Sequence[int],
    width: int,
    *,
    gap: int = 3,
    measure: Callable[[str], int] = len,
) -> Layout:
    """Lay columns out within ``width`` cells (``gap`` cells between two columns).

    1. Drop columns, highest ``priority`` first (the rightmost of equals first), until the
       rest fit with shrinkable columns at their floor (``min_width``), others whole.
    2. Shorten shrinkable columns to fill exactly: the lowest-value ones first (highest
       priority number), the widest of equals first, never below their floor.
    3. Only when nothing is left to drop: shorten text below its floor, down to its header.
    """
    n = len(columns)
    floors = [
        min(natural[i], max(c.min_width, measure(c.header))) if c.shrinkable else natural[i]
        for i, c in enumerate(columns)
    ]

    def total(indexes: Sequence[int], ws: Sequence[int] | Mapping[int, int]) -> int:
        return sum(ws[i] for i in indexes) + gap * max(0, len(indexes) - 1)

    keep = list(range(n))
    droppable = sorted(
        (i for i, c in enumerate(columns) if c.priority > 0),
        key=lambda i: (-columns[i].priority, -i),
    )
    for i in droppable:
        if total(keep, floors) <= width:
            break
        keep.remove(i)
    widths = {i: natural[i] for i in keep}
    excess = total(keep, natural) - width
    by_priority = sorted({columns[i].priority for i in keep if columns[i].shrinkable}, reverse=True)
    for prio in by_priority:
        if excess <= 0:
            break
        group = [i for i in keep if columns[i].shrinkable and columns[i].priority == prio]
        excess = _shrink(group, widths, floors, excess)
    if excess > 0:  # nothing left to drop: text goes below its floor, down to its header
        headers = [min(natural[i], measure(c.header)) for i, c in enumerate(columns)]
        _shrink([i for i in keep if columns[i].shrinkable], widths, headers, excess)
    return Layout(tuple(keep), tuple(widths[i] for i in keep), total(keep, widths) <= width)


def _shrink(group: list[int], widths: dict[int, int], floors: Sequence[int], excess: int) -> int:
    """Cut the widest columns of ``group`` first (to one level, never below a floor) until
    ``excess`` cells are saved or all are at their floor; returns the excess left."""
    room = sum(widths[i] - floors[i] for i in group)
    if room <= 0:
        return excess
    if room <= excess:
        for i in group:
            widths[i] = floors[i]
        return excess - room

    def saved(level: int) -> int:
        return sum(widths[i] - max(floors[i], level) for i in group if widths[i] > level)

    lo, hi = 0, max(widths[i] for i in group)  # saved(hi) == 0 < excess <= saved(lo)
    while hi - lo > 1:  # the highest level that still saves enough
        mid = (lo + hi) // 2
        if saved(mid) >= excess:
            lo = mid
        else:
            hi = mid
    left = saved(lo) - excess  # cut beyond what was needed: one cell back to as many
    cut = [i for i in group if widths[i] > lo and floors[i] <= lo]  # all cut to lo
    for i in group:
        if widths[i] > lo:
            widths[i] = max(floors[i], lo)
    for i in cut[:left]:  # left < len(cut): cutting to lo + 1 did not save enough
        widths[i] += 1
    return 0
