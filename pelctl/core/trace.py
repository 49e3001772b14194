"""``pelctl trace STREAM ID``: one message's whole story (docs/trace.md).

A message can be read and acknowledged, pending with a dead worker, requeued (a copy under a
new id carrying ``_original_id``), moved to a dead-letter stream (an entry carrying the
``_dlq_*`` envelope), replayed (another copy, carrying ``_replayed_from``) or deleted. The
answer is spread over the stream, every group's PEL, the dead-letter streams and the audit
log; :func:`trace` gathers it:

1. the entry asked for (``XRANGE id id``), and the message's id as first written: the
   entry's ``<prefix>original_id`` (a dead letter's original id: the field, else its
   ``_dlq_id``), else its own id (:mod:`pelctl.core.lineage` decides these fields);
2. its copies, in the streams being traced only: the source stream from the message's id on
   (copies are always written later into the same stream), read by the stream scan engine
   in bounded calls, and each dead-letter stream whole (the source's ``<stream>:dlq`` by the
   naming convention, plus any named with ``--dlq``). A copy joins the chain when its
   ``<prefix>original_id`` is the message's id, or, for a dead letter of the source, when
   its ``_dlq_id`` is one of the chain's ids in the source. Whatever an entry's fields
   claim (an ``_original_id`` or ``_dlq_source`` pointing elsewhere) is shown as a claim:
   it never adds a stream to the search;
3. for every copy and every group of its stream: pending (owner, idle, deliveries, the
   owner's liveness verdict), acknowledged, not yet delivered, or removed before the group
   read it; a copy gone from its stream: deleted or trimmed (``XINFO STREAM``);
4. the local audit log's lines that touched one of the chain's ids on this server;
5. what to do next, in the runbook style of ``inspect``'s advice.

Reads only; every call bounded (the scan engines' ``max_server_ms``; ``XPENDING`` of single
ids, pipelined).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core import lineage
from pelctl.core.aggregate import ScanCancelled
from pelctl.core.cmdline import command_line
from pelctl.core.dlq.envelope import (
    DlqEntry,
    default_dlq,
    dlq_source_of,
    head,
    is_dead_letter,
    is_dlq_name,
    marker_field,
    parse_entry,
)
from pelctl.core.entry_ids import normalize_ids
from pelctl.core.find import Match, StreamSearched
from pelctl.core.liveness.verdict import ACTIVE, DEAD_SUSPECT, IDLE, UNKNOWN
from pelctl.core.models import POISON_DELIVERIES, Advice, Fields, parse_id
from pelctl.redis.connection import Connection
from pelctl.redis.entries import EntryScan
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import pairs, rows
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS

# An entry's state in one group.
PENDING = "pending"  # in the group's PEL
ACKNOWLEDGED = "acknowledged"  # delivered (at or below last-delivered-id), not pending
NOT_DELIVERED = "not-delivered"  # above last-delivered-id: the group has not read it yet
LOST = "lost"  # above last-delivered-id but gone: removed before the group read it
SKIPPED = "skipped"  # at or below last-delivered-id of a group that never read anything
GROUP_STATES = (PENDING, ACKNOWLEDGED, NOT_DELIVERED, LOST, SKIPPED)

# An entry in its stream.
PRESENT = "present"
DELETED = "deleted"  # XDEL'd (at or below max-deleted-entry-id)
TRIMMED = "trimmed"  # below the stream's first entry
NEVER_WRITTEN = "never-written"  # above the last id the stream generated, or skipped ids
GONE = "gone"  # deleted or trimmed: the server cannot say which
NO_STREAM = "no-stream"  # the stream itself does not exist
STATUSES = (PRESENT, DELETED, TRIMMED, NEVER_WRITTEN, GONE, NO_STREAM)

# Its role in the story.
ORIGINAL = "original"  # the message as first written
REQUEUED = "requeued"  # a copy written by a requeue (carries the retry count)
REPLAYED = "replayed"  # a copy written by a DLQ replay (carries the replay marker)
DEAD_LETTER = "dead-letter"  # a dead-letter entry (the _dlq_* envelope)
COPY = "copy"  # in the chain (carries the original id), written by something else
KINDS = (ORIGINAL, REQUEUED, REPLAYED, DEAD_LETTER, COPY)

# Copies kept per trace; a message copied more often than this is said to be, not listed.
MAX_COPIES = 1_000
# Audit lines kept (the newest win); a log is read whole, line by line.
MAX_AUDIT_LINES = 200
# XPENDING single-id calls per pipeline round trip.
_PIPELINE = 500


@dataclass(frozen=True, slots=True)
class GroupState:
    """One entry in one group."""

    group: bytes
    state: str  # GROUP_STATES
    last_delivered_id: bytes
    consumer: bytes | None = None  # pending: the owner
    idle_ms: int | None = None
    deliveries: int | None = None
    verdict: str | None = None  # pending: the owner's liveness (pelctl.core.liveness)
    verdict_reason: str | None = None
    lag: int | None = None  # the group's lag (XINFO GROUPS), for not-delivered
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Lineage:
    """What an entry's own lineage fields say (claims: shown, never trusted further)."""

    original_id: bytes | None = None
    retry_count: int | None = None
    prior_deliveries: int | None = None
    replayed_from: bytes | None = None


@dataclass(frozen=True, slots=True)
class TracedEntry:
    """One entry of the message's chain: the original, a copy or a dead letter."""

    stream: bytes
    id: bytes
    kind: str  # KINDS
    status: str  # STATUSES
    fields: Fields | None  # None: not in the stream
    lineage: Lineage = Lineage()
    groups: tuple[GroupState, ...] = ()
    dead_letter: DlqEntry | None = None
    traced: bool = False  # the entry asked for
    claims: tuple[str, ...] = ()  # what its fields claim that the trace did not follow

    @property
    def time_ms(self) -> int:
        """When it was written: its id's time (the server's clock when the copy was made;
        a dead letter's ``_dlq_at`` says the same, but it is a field: data, not the server's
        word)."""
        return parse_id(self.id)[0]

    @property
    def sort_key(self) -> tuple[int, int, int]:
        ms, seq = parse_id(self.id)
        return (self.time_ms, ms, seq)


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the timeline."""

    at_ms: int
    event: str  # written | requeued | dead-lettered | replayed | copied | delivered | audit
    stream: bytes
    id: bytes | None = None
    group: bytes | None = None
    consumer: bytes | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class AuditLine:
    """An audit log line that touched one of the chain's ids."""

    time: str
    at_ms: int
    user: str
    host: str
    surface: str
    context: str | None
    action: str
    stream: str
    group: str
    dry_run: bool
    ids: tuple[str, ...]  # the chain's ids among the line's
    outcomes: tuple[tuple[str, int], ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class AuditRead:
    path: str
    status: str  # read | missing | unreadable
    error: str | None = None
    lines_read: int = 0
    lines: tuple[AuditLine, ...] = ()  # the lines that touched the chain's ids
    other_servers: int = 0  # lines naming the chain's ids on another server
    truncated: bool = False  # more lines matched than MAX_AUDIT_LINES (the newest kept)


@dataclass(frozen=True)
class Trace:
    stream: bytes  # the stream named
    id: bytes  # the id asked for
    source: bytes  # the message's stream (the named one, or a DLQ's source)
    original_id: bytes  # the message's id as first written (as the entry claims)
    server: str
    now_ms: int
    entries: tuple[TracedEntry, ...]  # in time order
    timeline: tuple[Event, ...]
    searched: tuple[StreamSearched, ...]
    audit: AuditRead
    advice: tuple[Advice, ...]
    summary: str
    notes: tuple[str, ...] = ()
    copies_truncated: bool = False

    @property
    def traced(self) -> TracedEntry | None:
        return next((e for e in self.entries if e.traced), None)

    @property
    def latest(self) -> TracedEntry | None:
        """The newest entry still in its stream (else the newest of all)."""
        present = [e for e in self.entries if e.status == PRESENT]
        pool = present or list(self.entries)
        return max(pool, key=lambda e: e.sort_key) if pool else None


# -- reading the stream's shape --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shape:
    """``XINFO STREAM`` (without FULL) and ``XINFO GROUPS`` of one stream."""

    exists: bool
    first_id: tuple[int, int] | None = None
    last_generated: tuple[int, int] | None = None
    max_deleted: tuple[int, int] | None = None  # None: not reported (Redis < 7.0)
    removed: int | None = None  # entries ever added minus the length (None: not reported)
    groups: tuple[dict[bytes, Any], ...] = ()


def _shape(conn: Connection, stream: bytes) -> _Shape:
    raw = conn.raw(stream)
    with redis_errors("XINFO STREAM"):
        kind = raw.execute_command("TYPE", stream)
        if kind == b"none":
            return _Shape(False)
        if kind != b"stream":
            from pelctl.base.errors import WrongType

            raise WrongType(
                f"key {escape(stream)} is a {kind.decode(errors='replace')}, not a stream"
            )
        info = pairs(raw.execute_command("XINFO", "STREAM", stream))
        groups = rows(raw.execute_command("XINFO", "GROUPS", stream))
    first = info.get(b"first-entry")
    deleted = info.get(b"max-deleted-entry-id")
    added = info.get(b"entries-added")
    return _Shape(
        True,
        removed=int(added) - int(info[b"length"]) if added is not None else None,
        first_id=parse_id(first[0]) if first else None,
        last_generated=parse_id(info[b"last-generated-id"]),
        max_deleted=parse_id(deleted) if deleted is not None else None,
        groups=tuple(groups),
    )


def _status(shape: _Shape, entry_id: bytes, found: bool) -> str:
    """Why an entry is (not) in its stream (Redis 7.0+ says enough; below, ``gone``). A
    stream that never lost an entry (``entries-added`` = its length) never held it. Only
    ``XDEL`` moves ``max-deleted-entry-id``, so an id above it was never deleted: below the
    first entry it was trimmed, between entries it was never written. At or below it,
    between entries it was deleted (or, if it never existed, no one can tell); below the
    first entry it may have been either."""
    if not shape.exists:
        return NO_STREAM
    if found:
        return PRESENT
    key = parse_id(entry_id)
    if shape.last_generated is not None and key > shape.last_generated:
        return NEVER_WRITTEN
    if shape.removed == 0:  # nothing was ever deleted or trimmed
        return NEVER_WRITTEN
    below_first = shape.first_id is None or key < shape.first_id
    if shape.max_deleted is None:  # not reported: the server cannot say which
        return GONE
    if key <= shape.max_deleted:
        return GONE if below_first else DELETED
    return TRIMMED if below_first else NEVER_WRITTEN


def _valid_id(value: bytes | None) -> bool:
    if value is None:
        return False
    try:
        normalize_ids([value])
    except Exception:  # noqa: BLE001 - any invalid id is simply not one
        return False
    return b"-" in value


# -- the lineage of one entry ------------------------------------------------------------------


def _last(flat: Sequence[bytes], name: bytes) -> bytes | None:
    found = None
    for i in range(0, len(flat) - 1, 2):
        if flat[i] == name:
            found = flat[i + 1]
    return found


def _lineage(flat: Sequence[bytes], prefix: str) -> Lineage:
    retry_key, prior_key, original_key = lineage.names(prefix)
    retry = _last(flat, retry_key)
    prior = _last(flat, prior_key)
    return Lineage(
        original_id=_last(flat, original_key),
        retry_count=lineage.count(retry) if retry is not None else None,
        prior_deliveries=lineage.count(prior) if prior is not None else None,
        replayed_from=_last(flat, marker_field(prefix)),
    )


def _pairs(flat: Sequence[bytes]) -> Fields:
    return tuple(zip(flat[0::2], flat[1::2], strict=False))


def _stream_kind(entry_id: bytes, flat: Sequence[bytes], lin: Lineage, prefix: str) -> str:
    """Which hop wrote a copy, by the fields each writes last: a replay ends with its marker,
    a requeue with the lineage fields (and keeps an earlier replay's marker in place)."""
    if len(flat) >= 2 and flat[-2] == marker_field(prefix):
        return REPLAYED
    if lin.retry_count is not None:
        return REQUEUED
    if lin.replayed_from is not None:
        return REPLAYED
    return COPY


@dataclass
class _Found:
    stream: bytes
    id: bytes
    flat: list[bytes] | None
    is_dlq: bool
    traced: bool = False
    inferred: bool = False  # a dead letter known only from a replayed copy's marker


# -- the trace ---------------------------------------------------------------------------------


@dataclass
class _Search:
    """The chain's search, in the streams being traced only: what it found and read."""

    conn: Connection
    source: bytes
    shapes: dict[bytes, _Shape]
    max_server_ms: float
    progress: Callable[[float | None, int], None] | None
    should_stop: Callable[[], bool] | None
    found: dict[tuple[bytes, bytes], _Found] = field(default_factory=dict)
    searched: list[StreamSearched] = field(default_factory=list)
    truncated: bool = False  # more copies than MAX_COPIES
    total_read: int = 0

    @property
    def keys(self) -> list[bytes]:
        return [k for k in self.shapes if self.shapes[k].exists]

    def scan(self, key: bytes, start: bytes, test: Callable[[bytes, list[bytes]], bool]) -> None:
        """Read ``key`` from ``start`` to its end; keep the entries ``test`` accepts."""
        s = StreamSearched(key, start, b"+", is_dlq=key != self.source)
        self.searched.append(s)
        engine = EntryScan(self.conn.raw(key), key, start=start, max_server_ms=self.max_server_ms)
        last = self.shapes[key].last_generated
        if last is not None:
            engine.span(last[0])
        keys = self.keys
        index = keys.index(key)
        for page in engine.pages():
            if self.should_stop is not None and self.should_stop():
                raise ScanCancelled()
            for eid, flat in page:
                if not test(eid, flat):
                    continue
                if len(self.found) >= MAX_COPIES:
                    self.truncated = True
                    continue
                self.found[(key, eid)] = _Found(key, eid, list(flat), key != self.source)
                s.matches += 1
            self.total_read += len(page)
            if self.progress is not None:
                part = engine.progress() or 0.0
                self.progress((index + part) / len(keys), self.total_read)
        st = engine.stats
        s.scanned, s.calls, s.max_call_ms = st.entries, st.calls, st.max_call_ms
        s.first_id, s.last_id, s.complete = st.first_id, st.last_id, True
        s.length = None


def trace(
    conn: Connection,
    stream: bytes,
    entry_id: bytes,
    *,
    dlqs: Sequence[bytes] = (),
    prefix: str = "_",
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    audit_log: Path | None = None,
    now_ms: int | None = None,
    progress: Callable[[float | None, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The story of the message whose entry (or copy, or dead letter) is ``stream`` /
    ``entry_id``. ``dlqs``: dead-letter streams to search besides the convention's
    ``<source>:dlq``; ``audit_log``: the log to read (default: the user's, as written by
    every mutation). ``progress(fraction, entries read)`` is called as the search goes;
    ``should_stop`` ends it early (:class:`pelctl.core.aggregate.ScanCancelled`)."""
    from pelctl.core.targets import require_stream

    (entry_id,) = normalize_ids([entry_id])
    require_stream(conn, stream)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    notes: list[str] = []
    source = dlq_source_of(stream) if is_dlq_name(stream) else stream
    assert source is not None
    dlq_keys = list(dict.fromkeys([default_dlq(source), *dlqs]))
    if stream != source and stream not in dlq_keys:
        dlq_keys.insert(0, stream)

    # 1. The entry asked for, and the message's id.
    asked_flat, original = _identify(
        conn, stream, entry_id, source, prefix, max_server_ms, should_stop, notes
    )

    # 2. The chain, in the streams being traced only.
    search = _Search(
        conn,
        source,
        {key: _shape(conn, key) for key in [source, *dlq_keys]},
        max_server_ms,
        progress,
        should_stop,
    )
    if not search.shapes[source].exists:
        notes.append(f"stream {escape(source)} does not exist (deleted, or never written)")
    _follow(search, stream, entry_id, original, dlq_keys, prefix)
    found, shapes = search.found, search.shapes
    # The message's own entry and the entry asked for, when the scans did not see them.
    found.setdefault((stream, entry_id), _Found(stream, entry_id, asked_flat, stream != source))
    found[(stream, entry_id)].traced = True
    if _valid_id(original) and shapes[source].exists and (source, original) not in found:
        found[(source, original)] = _Found(source, original, None, False)
    for s in search.searched:
        s.length = _xlen(conn, s.stream)

    # 3. The audit log, and the dead letters replayed since (the replay removed them).
    audit = _audit(search, dlq_keys, prefix, audit_log)

    # 4. States in every group, the reason an entry is gone.
    entries = _states(conn, found.values(), shapes, original, prefix, now)
    entries = sorted(entries, key=lambda e: e.sort_key)
    result = Trace(
        stream=stream,
        id=entry_id,
        source=source,
        original_id=original,
        server=f"{conn.settings.redacted_url}",
        now_ms=now,
        entries=tuple(entries),
        timeline=tuple(_timeline(entries, audit, now)),
        searched=tuple(search.searched),
        audit=audit,
        advice=(),
        summary="",
        notes=tuple(notes),
        copies_truncated=search.truncated,
    )
    advice, summary = advise(result)
    return replace(result, advice=tuple(advice), summary=summary)


def _identify(
    conn: Connection,
    stream: bytes,
    entry_id: bytes,
    source: bytes,
    prefix: str,
    max_server_ms: float,
    should_stop: Callable[[], bool] | None,
    notes: list[str],
) -> tuple[list[bytes] | None, bytes]:
    """The entry asked for (its fields, None when gone) and the message's first id, as the
    entry (or its replayed copy) claims it; what looks wrong is added to ``notes``."""
    with redis_errors("XRANGE"):
        reply = conn.raw(stream).execute_command("XRANGE", stream, entry_id, entry_id)
    asked_flat: list[bytes] | None = list(reply[0][1]) if reply else None
    asked_is_letter = stream != source or (
        asked_flat is not None and is_dead_letter(asked_flat, prefix)
    )
    original = entry_id
    if asked_flat is not None:
        if asked_is_letter:
            letter = parse_entry(entry_id, asked_flat, prefix, stream)
            original = letter.original_id or entry_id
            if letter.source is not None and letter.source != source:
                notes.append(
                    f"{escape(stream)} {entry_id.decode()} names {escape(letter.source)} as its "
                    f"source; traced in {escape(source)} (the streams named), not there: "
                    + command_line("trace", [letter.source, original], [("--dlq", stream)])
                )
        else:
            claimed = _lineage(asked_flat, prefix).original_id
            if claimed is not None:
                original = claimed
    elif stream != source:
        # A dead letter no longer in its DLQ: replayed, perhaps. Its replayed copy names it
        # (the replay marker) and, with its lineage, the message's id.
        replay = _find_replay(conn, source, entry_id, prefix, max_server_ms, should_stop)
        if replay is not None:
            claimed = _lineage(replay, prefix).original_id
            original = claimed if claimed is not None else entry_id
    if original != entry_id and not _valid_id(original):
        notes.append(
            f"the entry names {escape(original)} as its original id, which is not a stream "
            f"id: copies claiming it are looked for in the whole of {escape(source)}"
        )
    return asked_flat, original


def _follow(
    search: _Search,
    stream: bytes,
    entry_id: bytes,
    original: bytes,
    dlq_keys: Sequence[bytes],
    prefix: str,
) -> None:
    """Find the chain's members: copies in the source that name ``original`` (from its
    time on), then dead letters of any of them in each dead-letter stream."""
    source, shapes = search.source, search.shapes
    chain_source_ids: set[bytes] = {original}
    if stream == source:
        chain_source_ids.add(entry_id)
    original_key = lineage.names(prefix)[2]
    if shapes[source].exists:
        start = b"-"
        if _valid_id(original):
            start = min(original, entry_id, key=parse_id) if stream == source else original
        traced_in_source = entry_id if stream == source else None

        def in_source(eid: bytes, flat: list[bytes]) -> bool:
            if eid in (original, traced_in_source):
                return True
            # C-level membership first: most entries do not hold the id at all.
            return original in flat and _last(flat, original_key) == original

        search.scan(source, start, in_source)
        chain_source_ids.update(eid for (k, eid) in search.found if k == source)
    for key in dlq_keys:
        if shapes[key].exists:
            test = _letter_test(
                source, original, entry_id if key == stream else None, chain_source_ids, prefix
            )
            search.scan(key, b"-", test)


def _letter_test(
    source: bytes,
    original: bytes,
    traced_here: bytes | None,
    chain_source_ids: set[bytes],
    prefix: str,
) -> Callable[[bytes, list[bytes]], bool]:
    """Whether a dead-letter stream's entry is one of the chain's: a dead letter of
    ``source`` whose original id is the message's, or, without one, whose ``_dlq_id`` is a
    member's id in the source."""
    original_key = lineage.names(prefix)[2]
    dlq_id_key = head(prefix) + b"id"
    source_key = head(prefix) + b"source"

    def in_dlq(eid: bytes, flat: list[bytes]) -> bool:
        if eid == traced_here:
            return True
        if chain_source_ids.isdisjoint(flat):
            return False
        if source_key not in flat:
            return False  # not a dead letter: whatever it holds, it is not this chain
        if _last(flat, source_key) != source:
            return False
        claimed = _last(flat, original_key)
        if claimed is not None:
            return claimed == original
        return _last(flat, dlq_id_key) in chain_source_ids

    return in_dlq


def _audit(search: _Search, dlq_keys: Sequence[bytes], prefix: str, log: Path | None) -> AuditRead:
    """The audit log's lines about the chain. Dead letters replayed since (the replay removed
    them) are known from the replayed copies' marker and added to the chain, in the
    dead-letter stream a replay line names."""
    source, found, shapes = search.source, search.found, search.shapes
    letters = {eid for (k, eid) in found if k != source}
    replayed = [
        mark
        for f in found.values()
        if f.flat is not None and not f.is_dlq
        for mark in [_last(f.flat, marker_field(prefix))]
        if mark is not None and mark not in letters and _valid_id(mark)
    ]
    searched_dlqs = [k for k in dlq_keys if shapes[k].exists] or list(dlq_keys[:1])
    chain: dict[bytes, set[bytes]] = {}
    for f in found.values():
        chain.setdefault(f.stream, set()).add(f.id)
    for key in searched_dlqs:
        chain.setdefault(key, set()).update(replayed)
    audit = read_audit(log, chain, search.conn.settings.redacted_url)
    for mark in dict.fromkeys(replayed):
        key = _replayed_from_dlq(audit, mark, searched_dlqs)
        found[(key, mark)] = _Found(key, mark, None, True, inferred=True)
    return audit


def _find_replay(
    conn: Connection,
    source: bytes,
    letter_id: bytes,
    prefix: str,
    max_server_ms: float,
    should_stop: Callable[[], bool] | None,
) -> list[bytes] | None:
    """The fields of the copy replayed from dead letter ``letter_id`` into ``source`` (its
    replay marker names it), looked for from the dead letter's time on; None if none."""
    from pelctl.base.errors import StreamNotFound

    marker = marker_field(prefix)
    try:
        from pelctl.core.targets import require_stream

        require_stream(conn, source)
    except StreamNotFound:
        return None
    engine = EntryScan(conn.raw(source), source, start=letter_id, max_server_ms=max_server_ms)
    for page in engine.pages():
        if should_stop is not None and should_stop():
            raise ScanCancelled()
        for _eid, flat in page:
            if letter_id in flat and _last(flat, marker) == letter_id:
                return list(flat)
    return None


def _replayed_from_dlq(audit: AuditRead, letter_id: bytes, dlqs: Sequence[bytes]) -> bytes:
    """The dead-letter stream a replayed dead letter was in: the one a ``dlq-replay`` audit
    line names for it, among the streams traced; else the first of them (the source's
    conventional DLQ)."""
    from pelctl.base.binary import unescape

    for line in audit.lines:
        if line.action == "dlq-replay" and letter_id.decode() in line.ids:
            key = unescape(line.stream)
            if key in dlqs:
                return key
    return dlqs[0]


def _xlen(conn: Connection, key: bytes) -> int:
    """``XLEN`` of a stream the trace read (it exists: its shape said so)."""
    with redis_errors("XLEN"):
        return int(conn.raw(key).execute_command("XLEN", key))


# -- states in the groups ----------------------------------------------------------------------


def _states(
    conn: Connection,
    found: Iterable[_Found],
    shapes: dict[bytes, _Shape],
    original: bytes,
    prefix: str,
    now_ms: int,
) -> list[TracedEntry]:
    from pelctl.core.liveness.signals import group_verdicts

    by_stream: dict[bytes, list[_Found]] = {}
    for f in found:
        by_stream.setdefault(f.stream, []).append(f)
    out: list[TracedEntry] = []
    for key, items in by_stream.items():
        shape = shapes[key] if key in shapes else _shape(conn, key)
        raw = conn.raw(key)
        checks = [
            (bytes(g[b"name"]), f.id)
            for f in items
            if _status(shape, f.id, f.flat is not None) not in (NEVER_WRITTEN, NO_STREAM)
            for g in shape.groups
        ]
        pel: dict[tuple[bytes, bytes], list[Any]] = {}
        with redis_errors("XPENDING"):
            for i in range(0, len(checks), _PIPELINE):
                chunk = checks[i : i + _PIPELINE]
                pipe = raw.pipeline(transaction=False)
                for group, eid in chunk:
                    pipe.execute_command("XPENDING", key, group, eid, eid, 1)
                for (group, eid), reply in zip(chunk, pipe.execute(), strict=True):
                    if reply:
                        pel[(group, eid)] = reply[0]
        verdicts: dict[bytes, dict[bytes, Any]] = {}
        for group in {g for (g, _eid) in pel}:
            verdicts[group] = group_verdicts(conn, key, group, lock_key=conn.settings.lock_key)
        for f in items:
            status = _status(shape, f.id, f.flat is not None)
            groups: list[GroupState] = []
            if status not in (NEVER_WRITTEN, NO_STREAM):
                for g in shape.groups:
                    groups.append(_group_state(g, f.id, status, pel, verdicts))
            out.append(_entry(f, status, tuple(groups), original, prefix))
    return out


def _group_state(
    info: dict[bytes, Any],
    entry_id: bytes,
    status: str,
    pel: dict[tuple[bytes, bytes], list[Any]],
    verdicts: dict[bytes, dict[bytes, Any]],
) -> GroupState:
    group = bytes(info[b"name"])
    last = bytes(info[b"last-delivered-id"])
    lag = info.get(b"lag")
    lag = int(lag) if lag is not None else None
    row = pel.get((group, entry_id))
    if row is not None:
        consumer = bytes(row[1])
        judged = verdicts.get(group, {}).get(consumer)
        verdict, reason = (judged[1].verdict, judged[1].reason) if judged else (None, None)
        note = None
        if status != PRESENT:
            note = "a ghost: pending, but its stream entry is gone"
        return GroupState(
            group,
            PENDING,
            last,
            consumer=consumer,
            idle_ms=int(row[2]),
            deliveries=int(row[3]),
            verdict=verdict,
            verdict_reason=reason,
            note=note,
        )
    if parse_id(entry_id) > parse_id(last):
        if status == PRESENT:
            return GroupState(group, NOT_DELIVERED, last, lag=lag)
        return GroupState(
            group, LOST, last, note=f"{status} before the group read it: never delivered"
        )
    note = None
    if info.get(b"entries-read") is None:
        note = (
            "the group's read counter is unknown: it may have been created or moved past "
            "this entry (XGROUP CREATE/SETID) without reading it"
        )
    return GroupState(group, ACKNOWLEDGED, last, note=note)


def _entry(
    f: _Found, status: str, groups: tuple[GroupState, ...], original: bytes, prefix: str
) -> TracedEntry:
    claims: list[str] = []
    if f.flat is None:
        kind = DEAD_LETTER if f.is_dlq else (ORIGINAL if f.id == original else COPY)
        if f.inferred:
            claims.append("known from a replayed copy's replay marker: replayed, then removed")
        return TracedEntry(
            f.stream, f.id, kind, status, None, groups=groups, traced=f.traced, claims=tuple(claims)
        )
    lin = _lineage(f.flat, prefix)
    letter = None
    if f.is_dlq and is_dead_letter(f.flat, prefix):
        letter = parse_entry(f.id, f.flat, prefix, f.stream)
        kind = DEAD_LETTER
        if letter.original_id is not None and letter.original_id != original:
            claims.append(f"names {escape(letter.original_id)} as its original id")
    elif f.is_dlq:
        kind = COPY
    else:
        kind = ORIGINAL if f.id == original else _stream_kind(f.id, f.flat, lin, prefix)
        if lin.original_id is not None and lin.original_id != original:
            claims.append(f"names {escape(lin.original_id)} as its original id")
    return TracedEntry(
        f.stream,
        f.id,
        kind,
        status,
        _pairs(f.flat),
        lin,
        groups,
        letter,
        f.traced,
        tuple(claims),
    )


# -- the audit log -------------------------------------------------------------------------------


def read_audit(path: Path | None, chain: dict[bytes, set[bytes]], server: str) -> AuditRead:
    """The audit lines that touched one of ``chain``'s ids (per stream) on ``server``.

    The log is read line by line (memory: one line, and the lines kept); a line is parsed
    only when it holds one of the ids. A log that is missing or cannot be read is said so in
    the result, never an error: the rest of the trace stands without it."""
    from collections import deque

    from pelctl.base.binary import unescape
    from pelctl.base.paths import audit_path

    log = path or audit_path()
    wanted = [i for ids in chain.values() for i in ids]
    kept: deque[AuditLine] = deque(maxlen=MAX_AUDIT_LINES)
    lines = other = matched = 0
    try:
        with open(log, "rb") as fh:
            for line in fh:
                lines += 1
                if not any(i in line for i in wanted):
                    continue
                record = _record(line)
                if record is None:
                    continue
                stream = record.get("stream")
                if not isinstance(stream, str):
                    continue
                ids = chain.get(unescape(stream))
                if not ids:
                    continue
                touched = _ids_of(record) & {i.decode() for i in ids}
                if not touched:
                    continue
                if record.get("server") != server:
                    other += 1
                    continue
                matched += 1
                kept.append(_audit_line(record, touched))
    except FileNotFoundError:
        return AuditRead(str(log), "missing")
    except OSError as err:
        return AuditRead(str(log), "unreadable", err.strerror or str(err), lines)
    return AuditRead(
        str(log), "read", None, lines, tuple(kept), other, truncated=matched > len(kept)
    )


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _ids_of(record: dict[str, Any]) -> set[str]:
    out = {i for i in record.get("ids") or () if isinstance(i, str)}
    for failed in record.get("failed") or ():
        if isinstance(failed, dict) and isinstance(failed.get("id"), str):
            out.add(failed["id"])
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _audit_line(record: dict[str, Any], ids: set[str]) -> AuditLine:
    when = _text(record.get("time"))
    outcomes = record.get("outcomes")
    counted = (
        tuple((str(k), v) for k, v in outcomes.items() if isinstance(v, int))
        if isinstance(outcomes, dict)
        else ()
    )
    context = record.get("context")
    error = record.get("error")
    # Lines written by pelctl 0.1 name the repair "command".
    action = _text(record.get("action")) or _text(record.get("command"))
    return AuditLine(
        time=when,
        at_ms=_iso_ms(when),
        user=_text(record.get("user")),
        host=_text(record.get("host")),
        surface=_text(record.get("surface")),
        context=context if isinstance(context, str) else None,
        action=action,
        stream=_text(record.get("stream")),
        group=_text(record.get("group")),
        dry_run=record.get("dry_run") is True,
        ids=tuple(sorted(ids)),
        outcomes=counted,
        error=error if isinstance(error, str) else None,
    )


def _iso_ms(text: str) -> int:
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


# -- the timeline and the advice -------------------------------------------------------------------

_WRITTEN = {
    ORIGINAL: "written",
    REQUEUED: "requeued",
    REPLAYED: "replayed",
    DEAD_LETTER: "dead-lettered",
    COPY: "copied",
}


def _timeline(entries: Sequence[TracedEntry], audit: AuditRead, now_ms: int) -> list[Event]:
    from pelctl.base.binary import unescape

    events: list[Event] = []
    for e in entries:
        if e.status in (NEVER_WRITTEN, NO_STREAM):
            continue
        events.append(
            Event(
                e.time_ms,
                _WRITTEN[e.kind],
                e.stream,
                e.id,
                group=e.dead_letter.group if e.dead_letter else None,
                consumer=e.dead_letter.owner if e.dead_letter else None,
                detail=_written_detail(e),
            )
        )
        for g in e.groups:
            if g.state == PENDING and g.idle_ms is not None:
                n = g.deliveries or 0
                events.append(
                    Event(
                        # never before it was written (a back-dated idle time says so)
                        max(now_ms - g.idle_ms, e.time_ms),
                        "delivered",
                        e.stream,
                        e.id,
                        group=g.group,
                        consumer=g.consumer,
                        detail=f"delivery {n:,}, pending since",
                    )
                )
    for line in audit.lines:
        what = line.action + (" (dry run)" if line.dry_run else "")
        who = f"{line.user}@{line.host}" if line.host else line.user
        detail = f"{what} by {who} ({line.surface}"
        detail += f", context {line.context})" if line.context else ")"
        if line.error:
            detail += f": error {line.error}"
        elif line.outcomes:
            detail += ": " + ", ".join(f"{k} {v:,}" for k, v in line.outcomes)
        events.append(
            Event(
                line.at_ms,
                "audit",
                unescape(line.stream),
                line.ids[0].encode() if len(line.ids) == 1 else None,
                group=unescape(line.group) if line.group else None,
                detail=detail,
            )
        )
    order = {"written": 0, "requeued": 0, "replayed": 0, "dead-lettered": 0, "copied": 0}
    events.sort(key=lambda ev: (ev.at_ms, order.get(ev.event, 1)))
    return events


def _written_detail(e: TracedEntry) -> str:
    lin = e.lineage
    if e.kind == DEAD_LETTER and e.dead_letter is not None:
        d = e.dead_letter
        parts = []
        if d.dlq_id is not None:
            parts.append(f"from {escape(d.source or b'?')} {escape(d.dlq_id)}")
        if d.deliveries is not None:
            parts.append(f"after {d.deliveries:,} deliveries")
        if d.reason:
            parts.append(f"reason: {d.reason}")
        return ", ".join(parts)
    if e.kind == REQUEUED:
        prior = lin.prior_deliveries
        return f"retry {lin.retry_count or 0}" + (
            f", {prior:,} earlier deliver{'y' if prior == 1 else 'ies'}"
            if prior is not None
            else ""
        )
    if e.kind == REPLAYED and lin.replayed_from is not None:
        return f"from dead letter {escape(lin.replayed_from)}"
    return ""


def _entries(n: int) -> str:
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _state_text(g: GroupState) -> str:
    if g.state == PENDING:
        who = escape(g.consumer or b"?")
        verdict = f", {g.verdict}" if g.verdict else ""
        return (
            f"pending with {who}{verdict}, delivered {g.deliveries or 0:,} "
            f"time{'s' if g.deliveries != 1 else ''}, idle {format_duration_ms(g.idle_ms)}"
        )
    if g.state == NOT_DELIVERED:
        return "not delivered yet"
    if g.state == LOST:
        return "never delivered (gone before the group read it)"
    return "acknowledged"


def advise(t: Trace) -> tuple[list[Advice], str]:
    """What to do next (a runbook, safe in order: poison to the dead-letter stream before any
    requeue) and one line saying where the message is now."""
    out: list[Advice] = []
    latest = t.latest
    if latest is None:
        return out, "nothing found"
    for e in t.entries:
        for g in e.groups:
            names = (e.stream, g.group)
            where = f"{escape(e.stream)} {e.id.decode()}"
            if g.state == PENDING:
                out.append(_pending_advice(e, g, names, where))
            elif g.state == NOT_DELIVERED and e is latest:
                lag = f" (lag {g.lag:,})" if g.lag is not None else ""
                out.append(
                    Advice(
                        f"{where} is not yet delivered to group {escape(g.group)}{lag}: see "
                        "whether its consumers keep up",
                        command_line("inspect", [e.stream], [("--group", g.group)]),
                    )
                )
            elif g.state == LOST and e is latest:
                out.append(
                    Advice(
                        f"{where} was {e.status} before group {escape(g.group)} read it: the "
                        "group will never process it; publish the message again from its "
                        "source of truth"
                    )
                )
    if latest.kind == DEAD_LETTER and latest.status == PRESENT:
        letter = latest.dead_letter
        reason = f" ({letter.reason})" if letter is not None and letter.reason else ""
        out.append(
            Advice(
                f"the message is dead-lettered in {escape(latest.stream)} as "
                f"{latest.id.decode()}{reason}: read it and fix the cause",
                command_line("dlq show", [latest.stream, latest.id]),
            )
        )
        out.append(
            Advice(
                "then replay it to its source (a dry run first)",
                command_line("dlq replay", [latest.stream], [("--id", latest.id), "--dry-run"]),
            )
        )
    return out, _summary(t, latest)


def _pending_advice(
    e: TracedEntry, g: GroupState, names: tuple[bytes, bytes], where: str
) -> Advice:
    who = escape(g.consumer or b"?")
    group = escape(g.group)
    ids = [*names, e.id]
    if e.status != PRESENT:
        return Advice(
            f"{where} is {e.status} from the stream but still pending in group {group} "
            f"(held by {who}): a ghost no consumer can process; acknowledge it",
            command_line("ack", ids, ["--dry-run"]),
        )
    n = g.deliveries or 0
    if n >= POISON_DELIVERIES:
        return Advice(
            f"{where} was delivered {n:,} times in group {group} (held by {who}): a poison "
            "suspect; quarantine it in the dead-letter stream before any requeue",
            command_line("dlq move", ids, ["--dry-run"]),
        )
    idle = format_duration_ms(g.idle_ms)
    if g.verdict == DEAD_SUSPECT:
        return Advice(
            f"{where} is pending in group {group} with {who}, unseen for > {idle} (dead "
            f"suspect: {g.verdict_reason}); requeue it so a healthy consumer takes it",
            command_line("requeue", ids, ["--dry-run"]),
        )
    if g.verdict == UNKNOWN:
        return Advice(
            f"{where} is pending in group {group} with {who}, idle {idle}, liveness unknown "
            f"({g.verdict_reason}); once its worker is known to be gone, requeue it",
            command_line("requeue", ids, ["--dry-run"]),
        )
    state = g.verdict if g.verdict in (ACTIVE, IDLE) else "alive"
    return Advice(
        f"{where} is pending in group {group} with {who} ({state}), delivered {n:,} "
        f"time{'s' if n != 1 else ''}, idle {idle}: being processed; nothing to do yet"
    )


def _summary(t: Trace, latest: TracedEntry) -> str:
    kind = "the message" if latest.kind == ORIGINAL else f"its latest copy ({latest.kind})"
    where = f"{escape(latest.stream)} {latest.id.decode()}"
    if latest.status != PRESENT:
        gone = {NEVER_WRITTEN: "never written", GONE: "gone", NO_STREAM: "missing"}
        head = f"{kind}, {where}, is {gone.get(latest.status, latest.status)}"
    elif latest.kind == DEAD_LETTER:
        letter = latest.dead_letter
        reason = f" ({letter.reason})" if letter is not None and letter.reason else ""
        return f"{kind} is in the dead-letter stream: {where}{reason}"
    else:
        head = f"{kind} is {where}"
    if not latest.groups:
        if latest.status == PRESENT:
            return f"{head}; {escape(latest.stream)} has no consumer groups"
        return head
    states = "; ".join(f"{escape(g.group)}: {_state_text(g)}" for g in latest.groups)
    return f"{head} — {states}"


# -- find --trace ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TracedMatch:
    """A match of ``find --trace`` with its trace, or with the earlier match whose trace
    already holds it (a copy of the same message: traced once)."""

    match: Match
    trace: Trace | None
    traced_with: Match | None = None


def trace_matches(
    conn: Connection,
    matches: Iterable[Match],
    *,
    dlqs: Sequence[bytes] = (),
    prefix: str = "_",
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    audit_log: Path | None = None,
) -> Iterator[TracedMatch]:
    """Each match with its trace, as the matches come; a match found in an earlier match's
    trace refers to it. Memory: the ids of the chains traced so far."""
    covered: dict[tuple[bytes, bytes], Match] = {}
    for m in matches:
        earlier = covered.get((m.stream, m.id))
        if earlier is not None:
            yield TracedMatch(m, None, earlier)
            continue
        t = trace(
            conn,
            m.stream,
            m.id,
            dlqs=[d for d in dlqs if d != m.stream],
            prefix=prefix,
            max_server_ms=max_server_ms,
            audit_log=audit_log,
        )
        for e in t.entries:
            covered.setdefault((e.stream, e.id), m)
        yield TracedMatch(m, t)


__all__ = [
    "ACKNOWLEDGED",
    "AuditLine",
    "AuditRead",
    "DEAD_LETTER",
    "Event",
    "GroupState",
    "LOST",
    "Lineage",
    "NOT_DELIVERED",
    "ORIGINAL",
    "PENDING",
    "REPLAYED",
    "REQUEUED",
    "Trace",
    "TracedEntry",
    "TracedMatch",
    "advise",
    "read_audit",
    "trace",
    "trace_matches",
]
