"""FastStream 0.7: one ``__data__`` field holding a binary frame (headers and body), or the
older JSON envelope, or (not a frame) the raw body. Offsets and lengths are checked against
the value before anything is read (never trusted)."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

from pelctl.base.binary import escape, to_json_text
from pelctl.core.decoders.common import (
    MAX_DECODE_BYTES,
    NOT_JSON,
    PREVIEW_CHARS,
    Decoded,
    Fields,
    json_preview,
    last_value,
    other_fields,
    parse_json,
    text_preview,
)

FASTSTREAM_FIELD = b"__data__"
FASTSTREAM_MAGIC = b"\x89BIN\r\n\x1a\n"
_FRAME_HEAD = 18  # magic (8) + version (2) + headers_start (4) + data_start (4)


def _walk_pairs(
    block: bytes, count: int, take: Callable[[bytes, int, int], bytes | None]
) -> tuple[list[tuple[bytes, bytes]], int | None]:
    """Up to ``count`` (key, value) pairs, each string a u16 length then what ``take(block,
    pos, length)`` reads there (None: it cannot be read that way). Returns the complete pairs
    read and the position after the last one, or None for the position when a string could
    not be read."""
    out: list[tuple[bytes, bytes]] = []
    pos = 0
    end = len(block)
    for _ in range(count):
        pair = []
        for _part in range(2):
            if pos + 2 > end:
                return out, None
            (n,) = struct.unpack_from(">H", block, pos)
            pos += 2
            raw = take(block, pos, n)
            if raw is None:
                return out, None
            pair.append(raw)
            pos += len(raw)
        out.append((pair[0], pair[1]))
    return out, pos


def _take_bytes(block: bytes, pos: int, n: int) -> bytes | None:
    return block[pos : pos + n] if pos + n <= len(block) else None


def _take_chars(block: bytes, pos: int, n: int) -> bytes | None:
    text = block[pos : pos + 4 * n].decode("utf-8", "surrogateescape")[:n]
    if len(text) < n or any("\udc80" <= c <= "\udcff" for c in text):
        return None
    return text.encode("utf-8")


def _take_ascii(block: bytes, pos: int, n: int) -> bytes | None:
    value = block[pos : pos + n]
    return value if len(value) == n and value.isascii() else None


def _whole(
    block: bytes, count: int, take: Callable[[bytes, int, int], bytes | None]
) -> list[tuple[bytes, bytes]] | None:
    """Every pair read with ``take``, or None unless they fill exactly the block."""
    if count * 4 > len(block):
        return None
    pairs, pos = _walk_pairs(block, count, take)
    return pairs if pos == len(block) else None


def _pairs_by_bytes(block: bytes, count: int) -> list[tuple[bytes, bytes]] | None:
    """The header block read as the format says (lengths in bytes); None when the lengths
    do not add up to exactly the block."""
    return _whole(block, count, _take_bytes)


def _pairs_by_chars(block: bytes, count: int) -> list[tuple[bytes, bytes]] | None:
    """The header block read with each length as a count of UTF-8 *characters* — what
    FastStream 0.7 writes (``len(str)``) for a header that is not ASCII."""
    return _whole(block, count, _take_chars)


def _ascii_prefix(block: bytes, count: int) -> list[tuple[bytes, bytes]]:
    """The headers before the first one that is not ASCII (byte and character counts agree
    there, so those are right whatever came after)."""
    return _walk_pairs(block, count, _take_ascii)[0]


def read_frame(frame: bytes) -> tuple[list[tuple[bytes, bytes]], bytes, tuple[str, ...]] | None:
    """FastStream's binary frame, version 1: ``(headers, body, notes)``; None when the value
    is not such a frame or its offsets do not fit it (garbled, truncated).

    ``magic | version u16 | headers_start u32 | data_start u32 | at headers_start: count u16,
    count x (key_len u16, key, value_len u16, value) | at data_start: the body`` (big-endian).
    Offsets are checked before use. The body is read from ``data_start`` (always right); the
    headers are read by byte lengths, else by character lengths (FastStream 0.7 writes
    ``len(str)``), else only the leading ASCII ones are kept and a note says so.
    """
    if not frame.startswith(FASTSTREAM_MAGIC) or len(frame) < _FRAME_HEAD + 2:
        return None
    version, headers_start, data_start = struct.unpack_from(">HII", frame, 8)
    if (
        version != 1
        or headers_start < _FRAME_HEAD
        or not (headers_start + 2 <= data_start <= len(frame))
    ):
        return None
    (count,) = struct.unpack_from(">H", frame, headers_start)
    block = frame[headers_start + 2 : data_start]
    body = frame[data_start:]
    pairs = _pairs_by_bytes(block, count)
    if pairs is not None:
        return pairs, body, ()
    pairs = _pairs_by_chars(block, count)
    if pairs is not None:
        return (
            pairs,
            body,
            (
                "header lengths count characters, not bytes (FastStream 0.7 writes len(str) for "
                "headers that are not ASCII): read by characters",
            ),
        )
    pairs = _ascii_prefix(block, count)
    return (
        pairs,
        body,
        (
            f"headers inconsistent: {count - len(pairs)} of {count} unreadable (lengths do not add "
            "up to the body offset)",
        ),
    )


def _legacy_envelope(value: bytes) -> tuple[list[tuple[bytes, bytes]], bytes] | None:
    """FastStream's older JSON envelope ``{"data": "<body>", "headers": {...}}``."""
    doc = parse_json(value, containers_only=True)
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), str):
        return None
    raw_headers = doc.get("headers")
    headers: list[tuple[bytes, bytes]] = []
    if isinstance(raw_headers, dict):
        for k, v in raw_headers.items():
            text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            headers.append((str(k).encode(), text.encode("utf-8", "surrogatepass")))
    return headers, doc["data"].encode("utf-8", "surrogatepass")


def body_view(body: bytes, content_type: str | None) -> tuple[Any, str, tuple[str, ...]]:
    """``(value, body_type, notes)``: ``json`` (the parsed value) when the content type says
    JSON and it parses; ``text`` when it is UTF-8; ``binary`` (escaped text) otherwise."""
    notes: tuple[str, ...] = ()
    if content_type is not None and content_type.split(";")[0].strip().endswith("json"):
        parsed = parse_json(body)
        if parsed is not NOT_JSON:
            return parsed, "json", ()
        notes = (f"content-type {content_type} but the body is not JSON (or too big or deep)",)
    try:
        return body.decode("utf-8"), "text", notes
    except UnicodeDecodeError:
        return escape(body), "binary", notes


def _body_summary(value: Any, body_type: str, body: bytes) -> str:
    if body_type == "json":
        return json_preview(value, source_len=len(body))
    if body_type == "text":
        return text_preview(body)
    return escape(body[:PREVIEW_CHARS]) + ("…" if len(body) > PREVIEW_CHARS else "")


def decode_faststream(fields: Fields) -> Decoded | None:
    value = last_value(fields, FASTSTREAM_FIELD)
    if value is None or len(value) > MAX_DECODE_BYTES:
        return None
    notes: tuple[str, ...]
    if value.startswith(FASTSTREAM_MAGIC):
        frame = read_frame(value)
        if frame is None:
            return None  # a garbled or truncated frame: the raw view says more than a guess
        pairs, body, notes = frame
    else:
        legacy = _legacy_envelope(value)
        if legacy is not None:
            pairs, body = legacy
            notes = ("FastStream's older JSON envelope",)
        else:
            pairs, body = [], value
            notes = ("not a frame: FastStream reads the value as the raw body",)
    headers = {to_json_text(k): to_json_text(v) for k, v in pairs}
    content_type = headers.get("content-type")
    parsed, body_type, body_notes = body_view(body, content_type)
    notes = notes + body_notes
    summary = _body_summary(parsed, body_type, body)
    # content-type is left out of the line (the body shows what it is); kept everywhere else
    shown = [(k, v) for k, v in pairs if k != b"content-type"]
    if shown:
        text = " ".join(f"{text_preview(k, 60)}={text_preview(v, 80)}" for k, v in shown)
        summary += f" headers: {text}"
    if notes:
        summary += " (!)"
    summary += other_fields(fields, FASTSTREAM_FIELD)
    data = {"headers": headers, "body": parsed, "body_type": body_type}
    return Decoded("faststream", data, summary, notes)
