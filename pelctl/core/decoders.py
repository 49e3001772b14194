"""Payload decoders: a stream entry's fields shown as the message they carry.

A framework writes its own envelope into a stream entry: FastStream 0.7 one ``__data__``
field holding a binary frame (headers and body), taskiq-redis one ``data`` field holding the
task as JSON. :func:`decode` turns such fields into a :class:`Decoded` view (the format's
name, a JSON-able object, a one-line summary, notes on what could not be read), or ``None``
when no decoder recognises the entry: then every surface shows the raw fields escaped, as
it always did. The raw fields are never replaced; the decoded view is shown next to them.

The registry (docs/formats.md, "Payload decoders"):

- decoders installed by other distributions under the entry-point group ``pelctl.decoders``
  are tried first, in the order of their names, so a team's decoder (msgpack, protobuf) can
  take an entry before the built-in ones;
- then the built-in ``faststream``, ``taskiq`` and ``json`` decoders.

A decoder is called with the entry's fields (``((name, value), ...)``, bytes, in order) and
returns a :class:`Decoded` or ``None`` (not its format). It must never raise; one that does
(or returns something else) is skipped for that entry and recorded in :func:`problems`, and
the next decoder is tried. Entry points are loaded lazily, at the first :func:`decode`: a
command that shows no payload never scans the installed distributions.

Decoding is bounded: a value over :data:`MAX_DECODE_BYTES` is not decoded, JSON nested
deeper than :data:`MAX_DEPTH` is text, and frame offsets and lengths are checked against the
value before anything is read (never trusted).

No UI library is imported here (core).
"""

from __future__ import annotations

import json
import math
import struct
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pelctl.base.binary import clean, escape, to_json_text

ENTRY_POINT_GROUP = "pelctl.decoders"
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


def _finite_float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else text  # 1e999: kept as its text, valid JSON out


_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _depth_ok(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Nesting of a parsed JSON value within ``limit`` (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
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


def _last(fields: Fields, name: bytes) -> bytes | None:
    """The value of field ``name`` (the last one when it repeats, as a dict would keep)."""
    found = None
    for key, value in fields:
        if key == name:
            found = value
    return found


def _others(fields: Fields, name: bytes) -> str:
    """Fields other than the format's own (lineage fields of a requeue) for a summary."""
    rest = [f"{escape(k)}={text_preview(v, 60)}" for k, v in fields if k != name]
    return (" · " + " ".join(rest)) if rest else ""


# -- FastStream ----------------------------------------------------------------------------------

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


def _whole(block: bytes, count: int, take: Callable[[bytes, int, int], bytes | None]
           ) -> list[tuple[bytes, bytes]] | None:  # fmt: skip
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
    value = _last(fields, FASTSTREAM_FIELD)
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
    summary += _others(fields, FASTSTREAM_FIELD)
    data = {"headers": headers, "body": parsed, "body_type": body_type}
    return Decoded("faststream", data, summary, notes)


# -- taskiq --------------------------------------------------------------------------------------

TASKIQ_FIELD = b"data"
# taskiq.labels.LabelType: 1 any, 2 int, 3 str, 4 float, 5 bool, 6 bytes (base64, kept so)
_LABEL_TYPES: dict[int, Callable[[str], Any]] = {
    2: int,
    4: _finite_float,
    5: lambda text: text.lower() == "true",
}


def _label(value: Any, kind: Any) -> Any:
    parse = _LABEL_TYPES.get(kind) if isinstance(kind, int) else None
    if parse is None or not isinstance(value, str):
        return value
    try:
        return parse(value)
    except ValueError:
        return value


def _call(name: str, args: list[Any], kwargs: dict[str, Any], size: int) -> str:
    parts = [json_preview(a, 80, size) for a in args[:8]]
    if len(args) > 8:
        parts.append("…")
    parts += [f"{k}={json_preview(v, 80, size)}" for k, v in list(kwargs.items())[:8]]
    if len(kwargs) > 8:
        parts.append("…")
    return f"{name}({', '.join(parts)})"


def decode_taskiq(fields: Fields) -> Decoded | None:
    value = _last(fields, TASKIQ_FIELD)
    if value is None:
        return None
    msg = parse_json(value, containers_only=True)
    if not isinstance(msg, dict):
        return None
    task_id, task_name = msg.get("task_id"), msg.get("task_name")
    args, kwargs = msg.get("args"), msg.get("kwargs")
    if not (isinstance(task_id, str) and isinstance(task_name, str)
            and isinstance(args, list) and isinstance(kwargs, dict)):  # fmt: skip
        return None
    raw_labels = msg.get("labels") if isinstance(msg.get("labels"), dict) else {}
    kinds = msg.get("labels_types") if isinstance(msg.get("labels_types"), dict) else {}
    labels = {k: _label(v, kinds.get(k)) for k, v in raw_labels.items()}
    summary = f"{_call(task_name, args, kwargs, len(value))} id={task_id}"
    if labels:
        shown = " ".join(
            f"{k}={v if isinstance(v, str) else json_preview(v, 80, len(value))}"
            for k, v in labels.items()
        )
        summary += f" labels: {shown}"
    summary += _others(fields, TASKIQ_FIELD)
    data = {"task_id": task_id, "task_name": task_name, "args": args, "kwargs": kwargs,
            "labels": labels}  # fmt: skip
    return Decoded("taskiq", data, summary)


# -- JSON values ---------------------------------------------------------------------------------


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


BUILTIN: tuple[tuple[str, DecodeFn], ...] = (
    ("faststream", decode_faststream),
    ("taskiq", decode_taskiq),
    ("json", decode_json),
)


# -- the registry --------------------------------------------------------------------------------

_TRUSTED = frozenset(fn for _name, fn in BUILTIN)
_lock = threading.Lock()
_plugins: list[tuple[str, DecodeFn]] | None = None
_problems: dict[str, str] = {}


def _as_function(obj: Any) -> DecodeFn | None:
    if isinstance(obj, type):
        obj = obj()
    fn = getattr(obj, "decode", None)
    if callable(fn):
        return fn
    return obj if callable(obj) else None


def _load_plugins() -> list[tuple[str, DecodeFn]]:
    from importlib.metadata import entry_points

    found: list[tuple[str, DecodeFn]] = []
    try:
        points = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    except Exception as err:  # noqa: BLE001 - broken metadata must not break a listing
        _problems["(entry points)"] = f"cannot list the {ENTRY_POINT_GROUP} entry points: {err}"
        return found
    seen: set[str] = set()
    for ep in points:
        if ep.name in seen:
            continue  # the same name twice on sys.path: the first one wins, as for imports
        seen.add(ep.name)
        try:
            fn = _as_function(ep.load())
        except Exception as err:  # noqa: BLE001
            _problems[ep.name] = f"cannot load {ep.value}: {type(err).__name__}: {err}"
            continue
        if fn is None:
            _problems[ep.name] = f"{ep.value} is neither a function nor has a decode() method"
            continue
        found.append((ep.name, fn))
    return found


def registered() -> list[tuple[str, DecodeFn]]:
    """Every decoder in the order they are tried: entry points (by name), then built-ins."""
    global _plugins
    if _plugins is None:
        with _lock:
            if _plugins is None:
                _plugins = _load_plugins()
    return [*_plugins, *BUILTIN]


def reset() -> None:
    """Forget the loaded entry points (the next decode looks them up again)."""
    global _plugins
    with _lock:
        _plugins = None
        _problems.clear()


def problems() -> dict[str, str]:
    """Decoders that failed to load or raised, by name: the latest problem of each."""
    return dict(_problems)


def _jsonable(value: Any, depth: int = 0) -> Any:
    """A plugin's data made JSON-able: bytes as text (escaped when not UTF-8), tuples and
    sets as lists, keys as strings, non-finite floats and other objects as their text."""
    if depth > MAX_DEPTH:
        return "…"
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return to_json_text(bytes(value))
    if isinstance(value, Mapping):
        return {
            (to_json_text(k) if isinstance(k, bytes) else str(k)): _jsonable(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v, depth + 1) for v in value]
    return str(value)


def _checked(result: Decoded, name: str) -> Decoded:
    """A plugin's result with its types made safe to render and to write as JSON."""
    data = result.data if isinstance(result.data, Mapping) else {}
    summary = result.summary if isinstance(result.summary, str) else str(result.summary)
    notes = tuple(str(n) for n in result.notes) if isinstance(result.notes, tuple | list) else ()
    fmt = result.format if isinstance(result.format, str) and result.format else name
    return Decoded(clean(fmt), _jsonable(data), summary[: PREVIEW_CHARS * 4], notes)


def decode(fields: Fields | None) -> Decoded | None:
    """The first decoder's view of ``fields``, or None (not fetched, gone, or no decoder
    recognises the entry: show the raw fields). Never raises."""
    if not fields:
        return None
    for name, fn in registered():
        try:
            result = fn(fields)
        except Exception as err:  # noqa: BLE001 - a broken decoder never breaks a listing
            _problems[name] = f"raised {type(err).__name__}: {err}"
            continue
        if result is None:
            continue
        if not isinstance(result, Decoded):
            _problems[name] = f"returned {type(result).__name__}, not Decoded or None"
            continue
        if fn in _TRUSTED:
            return result
        try:
            return _checked(result, name)
        except Exception as err:  # noqa: BLE001
            _problems[name] = f"returned data that cannot be shown: {type(err).__name__}: {err}"
    return None
