"""Rows and JSON for PEL entries (``pelctl pending``, the TUI stuck-entries table)."""

from __future__ import annotations

from typing import Any

from pelctl.core.binary import escape, to_json_text
from pelctl.core.durations import format_duration_ms
from pelctl.core.models import Fields, PendingEntry
from pelctl.render.table import Column

COLUMNS = (
    Column("id", "ID"),
    Column("consumer", "CONSUMER"),
    Column("idle", "IDLE", "right"),
    Column("deliveries", "DELIVERIES", "right"),
)
PAYLOAD_COLUMN = Column("fields", "FIELDS")


def columns(with_payload: bool) -> tuple[Column, ...]:
    return COLUMNS + ((PAYLOAD_COLUMN,) if with_payload else ())


def fields_preview(fields: Fields | None, ghost: bool = False, width: int = 80) -> str:
    if ghost:
        return "(deleted from the stream)"
    if fields is None:
        return ""
    text = " ".join(f"{escape(k)}={escape(v)}" for k, v in fields)
    return text if len(text) <= width else text[: width - 1] + "…"


def row(e: PendingEntry, with_payload: bool = False) -> tuple[str, ...]:
    base = (e.id.decode(), escape(e.consumer), format_duration_ms(e.idle_ms), str(e.deliveries))
    if with_payload:
        return base + (fields_preview(e.fields, e.ghost),)
    return base


def row_style(e: PendingEntry) -> str | None:
    if e.deliveries >= 5:
        return "magenta"
    if e.idle_ms >= 3_600_000:
        return "red"
    if e.idle_ms >= 60_000:
        return "yellow"
    return None


def fields_json(fields: Fields) -> dict[str, str]:
    return {to_json_text(k): to_json_text(v) for k, v in fields}


def to_json(e: PendingEntry, with_payload: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": e.id.decode(),
        "consumer": escape(e.consumer),
        "idle_ms": e.idle_ms,
        "deliveries": e.deliveries,
    }
    if with_payload:
        out["fields"] = fields_json(e.fields) if e.fields is not None else None
        out["ghost"] = e.ghost
    return out
