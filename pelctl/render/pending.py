"""Rows and JSON for PEL entries (``pelctl pending``, the TUI stuck-entries table).

With payloads, the FIELDS cell shows the decoded payload (``faststream: {...} headers: ...``,
``taskiq: billing.charge(7) id=...``) when a decoder knows the entry, else the raw fields;
JSON keeps ``fields`` exactly as read and adds ``decoded`` (:mod:`pelctl.render.payload`)."""

from __future__ import annotations

from typing import Any

from pelctl.base.binary import escape, to_json_text
from pelctl.base.durations import format_duration_ms
from pelctl.core.decoders.common import Decoded
from pelctl.core.models import POISON_DELIVERIES, Fields, PendingEntry
from pelctl.render import payload
from pelctl.render.protocol import Rows
from pelctl.render.table import Column

# Every column stays on a narrow terminal (docs/output.md); the consumer's name and the
# payload are shortened.
COLUMNS = (
    Column("id", "ID"),
    Column("consumer", "CONSUMER", shrinkable=True, min_width=12),
    Column("idle", "IDLE", "right"),
    Column("deliveries", "DELIVERIES", "right"),
)
PAYLOAD_COLUMN = Column("fields", "FIELDS", shrinkable=True, min_width=16)


def columns(with_payload: bool) -> tuple[Column, ...]:
    return COLUMNS + ((PAYLOAD_COLUMN,) if with_payload else ())


def fields_preview(
    fields: Fields | None,
    ghost: bool = False,
    width: int = 80,
    decoded: Decoded | None = payload.UNSET,
) -> str:
    """The payload cell: decoded summary, or the raw fields escaped."""
    return payload.preview(fields, ghost, width, decoded)


def row(
    e: PendingEntry, with_payload: bool = False, decoded: Decoded | None = payload.UNSET
) -> tuple[str, ...]:
    base = (e.id.decode(), escape(e.consumer), format_duration_ms(e.idle_ms), str(e.deliveries))
    if with_payload:
        return base + (fields_preview(e.fields, e.ghost, decoded=decoded),)
    return base


def pel_pairs(e: PendingEntry | None, group: bytes) -> list[tuple[str, str]]:
    """An entry's PEL row as (label, value) lines (the TUI's entry view)."""
    if e is None:
        return [("pending", f"no: not in the PEL of {escape(group)} any more (acknowledged)")]
    pairs = [
        ("consumer", escape(e.consumer)),
        ("idle", format_duration_ms(e.idle_ms)),
        ("deliveries", str(e.deliveries)),
    ]
    if e.ghost:
        pairs.append(("stream entry", GHOST_NOTE))
    return pairs


GHOST_NOTE = "deleted from the stream: only its PEL entry is left (pelctl ghosts)"


def row_style(e: PendingEntry) -> str | None:
    if e.deliveries >= POISON_DELIVERIES:
        return "magenta"
    if e.idle_ms >= 3_600_000:
        return "red"
    if e.idle_ms >= 60_000:
        return "yellow"
    return None


def fields_json(fields: Fields) -> dict[str, str]:
    return {to_json_text(k): to_json_text(v) for k, v in fields}


def to_json(
    e: PendingEntry, with_payload: bool = False, decoded: Decoded | None = payload.UNSET
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": e.id.decode(),
        "consumer": escape(e.consumer),
        "idle_ms": e.idle_ms,
        "deliveries": e.deliveries,
    }
    if with_payload:
        out["fields"] = fields_json(e.fields) if e.fields is not None else None
        out["ghost"] = e.ghost
        out["decoded"] = payload.decoded_json(e.fields, decoded)
    return out


def renderer(with_payload: bool = False) -> Rows[PendingEntry]:
    """Pending entries (``pelctl pending``, the oldest of ``inspect``); with the payload, its
    FIELDS column and ``fields``/``ghost``/``decoded`` keys (each format decodes it once)."""
    return Rows[PendingEntry](
        columns(with_payload),
        lambda e: row(e, with_payload),
        lambda e: to_json(e, with_payload),
        row_style,
    )


# Entries without their payload (the dashboard's stuck entries, inspect's oldest).
PENDING = renderer()


def more(shown: int, total: int) -> str | None:
    """The footer of a listing cut at ``--limit``: how many there are in all."""
    if total <= shown:
        return None
    return f"showing {shown:,} of {total:,} pending (before filters); use --limit N or --all"
