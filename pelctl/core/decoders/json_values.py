"""Entries with at least one field whose value is a JSON object or array (the last of the
built-in decoders: the most general)."""

from __future__ import annotations

from typing import Any

from pelctl.base.binary import escape, to_json_text
from pelctl.core.decoders.common import (
    NOT_JSON,
    Decoded,
    Fields,
    json_preview,
    parse_json,
    text_preview,
)


def decode_json(fields: Fields) -> Decoded | None:
    """Entries with at least one field whose value is a JSON object or array: those values
    parsed, the other fields as text."""
    values: dict[str, Any] = {}
    shown: list[str] = []
    found = False
    for key, value in fields:
        parsed = parse_json(value, containers_only=True)
        name = to_json_text(key)
        if parsed is NOT_JSON:
            values[name] = to_json_text(value)
            shown.append(f"{escape(key)}={text_preview(value, 80)}")
        else:
            found = True
            values[name] = parsed
            shown.append(f"{escape(key)}={json_preview(parsed, source_len=len(value))}")
    if not found:
        return None
    return Decoded("json", {"fields": values}, " ".join(shown))
