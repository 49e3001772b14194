"""The fields of a plan file, each read and validated on its own: a hand-edited or damaged
plan must not reach the server. Every reader raises ``ValueError`` naming the field;
:func:`pelctl.core.plan.file.load` turns it into one ``error:`` line (exit 2). Names are
written and read with :func:`pelctl.base.binary.escape`, so binary names survive."""

from __future__ import annotations

import re
from typing import Any

from pelctl.base.binary import escape, unescape

MAX_NOTE_CHARS = 4_096
_STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")  # ASCII digits only (fullmatch)


def escaped(value: bytes | None) -> str | None:
    return None if value is None else escape(value)


def unescaped(value: Any) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return unescape(value)


def read_stream_id(value: Any) -> bytes:
    """A full stream id ``ms-seq`` with both parts below 2^64 (what XPENDING returns)."""
    if not isinstance(value, str) or not _STREAM_ID.fullmatch(value):
        raise ValueError(f"not a stream id: {str(value)[:40]!r} (ids look like 1700000000000-0)")
    if any(int(part) >= 2**64 for part in value.split("-")):
        raise ValueError(f"not a stream id: {value!r} (a part is 2^64 or more)")
    return value.encode()


def read_name(data: dict[str, Any], key: str, *, required: bool = False) -> bytes | None:
    """A stream, group or consumer name (escaped text); ``required``: present, not empty."""
    value = unescaped(data.get(key))
    if required and not value:
        raise ValueError(f'"{key}" must be a name, not {data.get(key)!r:.40}')
    return value


def read_table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f'"{key}" must be an object')
    return value


def read_list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise ValueError(f'"{key}" must be a list')
    return value


def read_int(data: dict[str, Any], key: str) -> int:
    value = read_opt_int(data, key)
    if value is None:
        raise ValueError(f'"{key}" must be a whole number')
    return value


def read_opt_int(data: dict[str, Any], key: str) -> int | None:
    """A whole number or null (a hand-edited or damaged plan must not reach the server)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError(f'"{key}" must be a whole number from 0 to 2^63-1, not {value!r:.40}')
    return value


def read_opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f'"{key}" must be text, not {type(value).__name__}')
    return value


def read_bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f'"{key}" must be true or false')
    return bool(value)


def read_note(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_NOTE_CHARS:
        raise ValueError(f"a note must be text of at most {MAX_NOTE_CHARS:,} characters")
    return value
