"""What every decoder shares: the result (:class:`Decoded`), the bounds (``MAX_DECODE_BYTES``,
``MAX_DEPTH``, ``PREVIEW_CHARS``), and the bounded helpers decoders use: JSON parsed within
the bounds (:func:`parse_json`), one-line previews (:func:`json_preview`,
:func:`text_preview`), a field by name (:func:`last_value`) and the other fields
(:func:`other_fields`). A decoder of another distribution needs only :class:`Decoded`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pelctl.base.binary import escape

MAX_DECODE_BYTES = 1 << 20  # a field value larger than 1 MiB is not decoded
MAX_DEPTH = 64  # JSON nested deeper than this is not decoded (shown as text)
PREVIEW_CHARS = 240  # the longest piece of data one summary holds

Fields = Sequence[tuple[bytes, bytes]]
DecodeFn = Callable[[Fields], "Decoded | None"]


@dataclass(frozen=True, slots=True)
class Decoded:
    """One entry's payload as its format reads it.

    ``data`` is JSON-able (str keys; str, int, float, bool, None, lists and objects): it is
    the ``decoded`` object of JSON output, with ``format`` (and ``notes``) added. ``summary``
    is one line for tables, without the format's name (pelctl puts ``format: `` in front).
    ``notes`` say what could not be decoded (inconsistent headers, a body that is not the
    JSON its content type claims).
    """

    format: str = ""
    data: Mapping[str, Any] | None = None
    summary: str = ""
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format}
        for key, value in (self.data or {}).items():
            if key not in ("format", "notes"):
                out[key] = value
        if self.notes:
            out["notes"] = list(self.notes)
        return out


# -- helpers for decoders ------------------------------------------------------------------------

NOT_JSON = object()  # what parse_json returns for a value that is not (usable) JSON


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else text  # 1e999: kept as its text, valid JSON out


_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)


def _depth_ok(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Nesting of a parsed JSON value within ``limit`` (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def parse_json(value: bytes, *, containers_only: bool = False) -> Any:
    """``value`` parsed as JSON, or :data:`NOT_JSON`. Bounded: at most ``MAX_DECODE_BYTES``,
    nesting at most ``MAX_DEPTH``; ``NaN``/``Infinity`` are not JSON; a float too large for a
    double is kept as its text. ``containers_only``: only an object or an array counts."""
    if len(value) > MAX_DECODE_BYTES:
        return NOT_JSON
    head = value.lstrip()[:1]
    if containers_only and head not in (b"{", b"["):
        return NOT_JSON
    try:
        text = value.decode("utf-8")
        parsed = _JSON.decode(text)
    except (ValueError, RecursionError):
        return NOT_JSON
    # Nesting cannot exceed the number of brackets: count them (in C) before walking.
    if text.count("[") + text.count("{") > MAX_DEPTH and not _depth_ok(parsed):
        return NOT_JSON
    return parsed


_SMALL = 16_384  # below this many bytes of source, encoding all of it (in C) is cheapest
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)


def json_preview(value: Any, limit: int = PREVIEW_CHARS, source_len: int | None = None) -> str:
    """Compact JSON of ``value`` for a one-line summary, cut after about ``limit`` characters.
    ``source_len`` (the size of the JSON it was parsed from) below ``_SMALL``: one C call;
    otherwise the lazy encoder, so a 1 MiB body costs what the preview shows."""
    if source_len is not None and source_len <= _SMALL:
        text = _ENCODER.encode(value)
        return text if len(text) <= limit else text[:limit] + "…"
    out: list[str] = []
    size = 0
    for chunk in _ENCODER.iterencode(value):
        out.append(chunk)
        size += len(chunk)
        if size > limit:
            return "".join(out)[:limit] + "…"
    return "".join(out)


def text_preview(value: bytes, limit: int = PREVIEW_CHARS) -> str:
    """Bytes for a summary: UTF-8 as text, anything else escaped (``\\xNN``), cut at ``limit``."""
    if len(value) <= limit and value.isascii():
        return value.decode("ascii")
    head = value[: limit * 4]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = escape(head)
    cut = len(text) > limit or len(head) < len(value)
    return text[:limit] + ("…" if cut else "")


def last_value(fields: Fields, name: bytes) -> bytes | None:
    """The value of field ``name`` (the last one when it repeats, as a dict would keep)."""
    found = None
    for key, value in fields:
        if key == name:
            found = value
    return found


def other_fields(fields: Fields, name: bytes) -> str:
    """Fields other than the format's own (lineage fields of a requeue) for a summary."""
    rest = [f"{escape(k)}={text_preview(v, 60)}" for k, v in fields if k != name]
    return (" · " + " ".join(rest)) if rest else ""
