"""``pelctl find``: search a stream's entries (and its dead letters) by field, text or decoded
payload, one bounded ``XRANGE`` at a time (:mod:`pelctl.redis.entries`).

What matches (every condition given must hold):

- ``--field NAME=VALUE``: a field ``NAME`` whose value is exactly ``VALUE`` (bytes; names
  and values take the escapes of names, ``\\xNN``);
- ``--contains TEXT``: ``TEXT`` in any field name or value (bytes, case-sensitive);
- ``--payload PATH=VALUE``: the payload as its decoder reads it (docs/formats.md, "Payload
  decoders"): ``PATH`` is a dotted path into the ``decoded`` object that JSON output shows
  (``task_id``, ``headers.correlation_id``, ``body.order``, ``fields.event.type``,
  ``args.0``, ``format``); a string compares exactly, anything else as compact JSON
  (``7``, ``true``, ``null``); ``\\.`` is a dot inside a key.

The range is ids (``--since``/``--until``: durations, ISO times or ids, as ``dlq list``
takes them). Memory is one page of the stream plus the match being handed over; a search
stops at ``limit`` matches and says where (:class:`StreamSearched`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import StreamNotFound, UsageError
from pelctl.core.decoders.common import Decoded
from pelctl.core.decoders.registry import decode
from pelctl.core.models import Fields
from pelctl.redis.connection import Connection
from pelctl.redis.entries import EntryScan
from pelctl.redis.errors import redis_errors
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS

# -- what to look for ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldEquals:
    """``--field NAME=VALUE``: a field named ``name`` with exactly ``value``."""

    name: bytes
    value: bytes


@dataclass(frozen=True, slots=True)
class Contains:
    """``--contains TEXT``: ``text`` anywhere in a field name or value."""

    text: bytes


@dataclass(frozen=True, slots=True)
class PayloadEquals:
    """``--payload PATH=VALUE``: the decoded payload's value at ``path`` is ``value``."""

    path: tuple[str, ...]
    value: str

    @property
    def spec(self) -> str:
        return ".".join(p.replace(".", "\\.") for p in self.path) + "=" + self.value


@dataclass(frozen=True)
class Query:
    fields: tuple[FieldEquals, ...] = ()
    contains: tuple[Contains, ...] = ()
    payload: tuple[PayloadEquals, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.fields or self.contains or self.payload)

    def describe(self) -> str:
        """The query as the options that made it (for summaries)."""
        parts = [f"--field {escape(f.name)}={escape(f.value)}" for f in self.fields]
        parts += [f"--contains {escape(c.text)}" for c in self.contains]
        parts += [f"--payload {p.spec}" for p in self.payload]
        return " ".join(parts)


def split_assignment(text: str, option: str) -> tuple[str, str]:
    """``NAME=VALUE`` at the first ``=`` (a value may hold more of them)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(
            f"{option} {text[:60]!r}: expected NAME=VALUE",
            hint=f"for example {option} order_id=ord-123",
        )
    return name, value


def parse_path(text: str) -> tuple[str, ...]:
    """A dotted path (``headers.correlation_id``); ``\\.`` is a dot inside a key."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] == ".":
            current.append(".")
            i += 2
            continue
        if ch == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    if any(p == "" for p in parts):
        raise UsageError(
            f"--payload path {text[:60]!r} has an empty key",
            hint="a path is keys joined by dots: headers.correlation_id, body.order, task_id",
        )
    return tuple(parts)


def payload_value(decoded: Decoded | None, path: Sequence[str]) -> Any:
    """The decoded object's value at ``path`` (keys of objects, indexes of lists), or
    :data:`MISSING`."""
    if decoded is None:
        return MISSING
    node: Any = decoded.to_json()
    for key in path:
        if isinstance(node, dict):
            if key not in node:
                return MISSING
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return MISSING
    return node


MISSING: Any = object()


def same_value(found: Any, wanted: str) -> bool:
    """A string compares as itself, anything else as its compact JSON text."""
    if found is MISSING:
        return False
    if isinstance(found, str):
        return found == wanted
    return json.dumps(found, separators=(",", ":"), ensure_ascii=False) == wanted


def compile_query(query: Query) -> Callable[[list[bytes]], tuple[bool, Decoded | None]]:
    """One function from an entry's flat ``[name, value, ...]`` to (matches, the payload
    decoded when the query needed it): the cheap tests (C-level ``in``) first."""
    fields = [(f.name, f.value) for f in query.fields]
    texts = [c.text for c in query.contains]
    payload = list(query.payload)
    joined = [t for t in texts if b"\x00" not in t]
    apart = [t for t in texts if b"\x00" in t]

    def test(flat: list[bytes]) -> tuple[bool, Decoded | None]:
        for name, value in fields:
            if value not in flat or not _has_field(flat, name, value):
                return False, None
        if joined:
            # No name or value can hold the separator's match: a text without NUL bytes
            # found in the joined entry is inside one name or value.
            blob = b"\x00".join(flat)
            for t in joined:
                if t not in blob:
                    return False, None
        for t in apart:
            if not any(t in x for x in flat):
                return False, None
        if not payload:
            return True, None
        decoded = decode(_pairs(flat))
        for p in payload:
            if not same_value(payload_value(decoded, p.path), p.value):
                return False, decoded
        return True, decoded

    return test


def _has_field(flat: list[bytes], name: bytes, value: bytes) -> bool:
    return any(flat[i] == name and flat[i + 1] == value for i in range(0, len(flat) - 1, 2))


def _pairs(flat: Sequence[bytes]) -> Fields:
    return tuple(zip(flat[0::2], flat[1::2], strict=False))


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Match:
    stream: bytes
    id: bytes
    fields: Fields
    is_dlq: bool = False
    # the payload decoded (by a --payload test); None: not decoded, or no decoder knows it
    decoded: Decoded | None = None
    decoded_known: bool = False  # ``decoded`` holds the decoders' answer


@dataclass
class StreamSearched:
    """One stream searched: the range asked, what was read, and whether it was all read."""

    stream: bytes
    start: bytes
    end: bytes
    is_dlq: bool = False
    length: int | None = None  # XLEN when the search started; None: the stream is missing
    scanned: int = 0
    matches: int = 0
    calls: int = 0
    max_call_ms: float = 0.0
    first_id: bytes | None = None  # the first and last entries read
    last_id: bytes | None = None
    complete: bool = False  # False: stopped at the limit (or not reached)

    @property
    def missing(self) -> bool:
        return self.length is None


@dataclass
class FindRun:
    """A search: :meth:`matches` yields them as found; the counts fill in as it goes."""

    conn: Connection
    stream: bytes
    query: Query
    start: bytes = b"-"
    end: bytes = b"+"
    dlqs: tuple[bytes, ...] = ()
    limit: int | None = None
    max_server_ms: float = DEFAULT_MAX_SERVER_MS
    # called after each page: (fraction of the search done or None, entries read so far)
    progress_to: Callable[[float | None, int], None] | None = None
    searched: list[StreamSearched] = field(default_factory=list)
    found: int = 0
    limited: bool = False
    elapsed_s: float = 0.0
    _scan: EntryScan | None = None
    _index: int = 0

    def __post_init__(self) -> None:
        if self.query.empty:
            raise UsageError(
                "nothing to find: give --field NAME=VALUE, --contains TEXT or --payload PATH=VALUE",
                hint="for example: pelctl find orders --field order_id=ord-123",
            )
        self.searched = [StreamSearched(self.stream, self.start, self.end)]
        self.searched += [StreamSearched(d, self.start, self.end, is_dlq=True) for d in self.dlqs]

    def check(self) -> None:
        """The stream must exist (exit 3) and be a stream; a DLQ that does not exist is
        searched as empty (it is noted)."""
        lengths = _lengths(self.conn, [s.stream for s in self.searched])
        for s, length in zip(self.searched, lengths, strict=True):
            s.length = length
        if self.searched[0].length is None:
            raise StreamNotFound(
                f"stream {escape(self.stream)} not found", hint="list streams: pelctl streams"
            )

    def progress(self) -> float | None:
        """Fraction of the whole search done (the streams in turn, by id time)."""
        n = len(self.searched)
        part = self._scan.progress() if self._scan is not None else None
        return min(1.0, (self._index + (part or 0.0)) / n)

    def scanned(self) -> int:
        return sum(s.scanned for s in self.searched)

    def matches(self) -> Iterator[Match]:
        t0 = time.perf_counter()
        try:
            self.check()
            test = compile_query(self.query)
            for index, s in enumerate(self.searched):
                self._index = index
                if s.missing:
                    s.complete = True
                    continue
                scan = self._scan = EntryScan(
                    self.conn.raw(s.stream),
                    s.stream,
                    start=self.start,
                    end=self.end,
                    max_server_ms=self.max_server_ms,
                )
                if s.length:
                    scan.span(_last_ms(self.conn, s.stream))
                stopped = False
                unread = 0
                for page in scan.pages():
                    for position, (entry_id, flat) in enumerate(page):
                        ok, decoded = test(flat)
                        if not ok:
                            continue
                        s.matches += 1
                        self.found += 1
                        yield Match(
                            s.stream,
                            entry_id,
                            _pairs(flat),
                            s.is_dlq,
                            decoded,
                            bool(self.query.payload),
                        )
                        if self.limit is not None and self.found >= self.limit:
                            # The entries of this page after this match are not looked at.
                            unread = len(page) - position - 1
                            stopped = True
                            break
                    _account(s, scan)
                    if stopped:
                        break
                    if self.progress_to is not None:
                        self.progress_to(self.progress(), self.scanned())
                _account(s, scan)
                if stopped:
                    s.scanned -= unread
                    s.last_id = entry_id
                    self.limited = True
                    return
                s.complete = True
        finally:
            self.elapsed_s = time.perf_counter() - t0


def _account(s: StreamSearched, scan: EntryScan) -> None:
    st = scan.stats
    s.scanned, s.calls, s.max_call_ms = st.entries, st.calls, st.max_call_ms
    s.first_id, s.last_id = st.first_id, st.last_id


def _lengths(conn: Connection, keys: Sequence[bytes]) -> list[int | None]:
    """``XLEN`` of each key (None: missing); a key that is not a stream is WrongType."""
    from pelctl.base.errors import WrongType

    out: list[int | None] = []
    for key in keys:
        with redis_errors("XLEN"):
            raw = conn.raw(key)
            kind = raw.execute_command("TYPE", key)
            if kind == b"none":
                out.append(None)
                continue
            if kind != b"stream":
                raise WrongType(
                    f"key {escape(key)} is a {kind.decode(errors='replace')}, not a stream"
                )
            out.append(int(raw.execute_command("XLEN", key)))
    return out


def _last_ms(conn: Connection, stream: bytes) -> int:
    """The id time of the stream's last entry (for progress; XINFO STREAM, one call)."""
    from pelctl.redis.replies import pairs

    with redis_errors("XINFO STREAM"):
        info = pairs(conn.raw(stream).execute_command("XINFO", "STREAM", stream))
    last = info.get(b"last-generated-id") or b"0-0"
    return int(bytes(last).split(b"-", 1)[0])


def time_bounds(
    since: str | None, until: str | None, now_ms: int | None = None
) -> tuple[bytes, bytes]:
    """``--since``/``--until`` as XRANGE bounds (durations ago, ISO times or ids)."""
    from pelctl.core.dlq.read import parse_time_bound

    start = parse_time_bound(since, now_ms=now_ms) if since is not None else b"-"
    end = parse_time_bound(until, now_ms=now_ms, end=True) if until is not None else b"+"
    return start, end


__all__ = [
    "Contains",
    "FieldEquals",
    "FindRun",
    "Match",
    "PayloadEquals",
    "Query",
    "StreamSearched",
    "compile_query",
    "parse_path",
    "payload_value",
    "split_assignment",
    "time_bounds",
]
