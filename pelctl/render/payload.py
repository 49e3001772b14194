"""An entry's payload for display: the decoded one-line summary, the JSON ``decoded`` object,
and the sections of the full view (``dlq show``, the TUI's entry view).

The decoders (:mod:`pelctl.core.decoders`) say what a payload *is*; this module only lays
it out. Every string here is data and is escaped by the surface that shows it
(:func:`pelctl.base.binary.clean` for terminal text, :func:`pelctl.base.binary.json_text` for
JSON); the blocks are JSON made by ``json_text``, whose only line breaks are layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pelctl.base.binary import escape, json_text
from pelctl.core.decoders.common import Decoded
from pelctl.core.decoders.registry import decode
from pelctl.core.models import Fields
from pelctl.render.table import Column, TableData

GHOST = "(deleted from the stream)"


class _Unset:
    """Marks "not decoded yet" (None already means "decoded: no decoder knows it")."""


UNSET: Any = _Unset()


def resolve(fields: Fields | None, decoded: Decoded | None = UNSET) -> Decoded | None:
    return decode(fields) if decoded is UNSET else decoded


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def raw_preview(fields: Fields, width: int = 80) -> str:
    """The fields as ``name=value`` pairs, escaped (the view of an entry no decoder knows).
    Each value is escaped only as far as the width can show."""
    parts: list[str] = []
    size = -1
    for k, v in fields:
        part = f"{escape(k[: width * 4])}={escape(v[: width * 4])}"
        parts.append(part)
        size += len(part) + 1
        if size > width:  # enough to fill the cell: the rest would be cut anyway
            break
    return _cut(" ".join(parts), width)


def preview(
    fields: Fields | None,
    ghost: bool = False,
    width: int = 80,
    decoded: Decoded | None = UNSET,
) -> str:
    """One line for a table cell: ``faststream: {"order": 7} headers: ...`` when a decoder
    knows the entry, else the raw fields. ``decoded``: already decoded (saves a decode)."""
    if ghost:
        return GHOST
    if fields is None:
        return ""
    d = resolve(fields, decoded)
    if d is None:
        return raw_preview(fields, width)
    return _cut(f"{d.format}: {d.summary}", width)


def decoded_json(fields: Fields | None, decoded: Decoded | None = UNSET) -> dict[str, Any] | None:
    """The ``decoded`` object of JSON output (``None`` when no decoder knows the entry)."""
    d = resolve(fields, decoded)
    return d.to_json() if d is not None else None


# -- the full view -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sections:
    """A decoded payload laid out: ``pairs`` (one line each: the format, scalars), then
    ``parts`` in the decoder's order, each a title with either name/value rows (a table:
    headers, labels, kwargs) or a block of indented JSON (a JSON body, args). All text is
    data: escape it on the way out."""

    format: str
    pairs: list[tuple[str, str]] = field(default_factory=list)
    parts: list[tuple[str, list[tuple[str, str]] | str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value)


def sections(d: Decoded) -> Sections:
    """Scalars become pairs, objects of scalars (headers, labels, kwargs) tables, anything
    else (a JSON body, args) an indented JSON block. A FastStream body is a block when it is
    JSON and a pair otherwise (text and binary bodies stay on one escaped line)."""
    out = Sections(d.format, notes=list(d.notes))
    data = dict(d.data or {})
    body_type = data.get("body_type") if d.format == "faststream" else None
    for key, value in data.items():
        if key == "body_type":
            continue
        if key == "body" and body_type is not None:
            if body_type == "json" and not _scalar(value):
                out.parts.append((f"body ({body_type})", json_text(value, indent=2)))
            else:
                out.pairs.append((f"body ({body_type})", _shown(value)))
        elif _scalar(value) or value in ({}, []):
            out.pairs.append((key, _shown(value)))
        elif isinstance(value, dict) and value and all(_scalar(v) for v in value.values()):
            out.parts.append((key, [(str(k), _shown(v)) for k, v in value.items()]))
        else:
            out.parts.append((key, json_text(value, indent=2)))
    return out


def table_data(title: str, rows: list[tuple[str, str]]) -> TableData:
    """A name/value section (headers, labels) as a table."""
    return TableData((Column("name", "NAME"), Column("value", "VALUE")), rows, title=title)
