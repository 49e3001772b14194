"""A UI-neutral table: columns with keys, headers and alignment; rows of display strings."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    header: str
    justify: str = "left"  # left | right
    style: str | None = None  # rich style string, applied by rich and textual alike


@dataclass(frozen=True)
class TableData:
    columns: tuple[Column, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
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
