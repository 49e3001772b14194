"""Finding the message's chain, in the streams being traced only: the entry asked for and
the message's first id (:func:`identify`), its copies in the source and its dead letters
(:func:`follow`, over :class:`Search`'s bounded scans), and the audit log's lines about
them with the dead letters a replay removed since (:func:`audit_chain`). What an entry's
fields claim never adds a stream to the search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pelctl.base.binary import escape
from pelctl.core import lineage
from pelctl.core.aggregate import ScanCancelled
from pelctl.core.cmdline import command_line
from pelctl.core.dlq.envelope import head, is_dead_letter, marker_field, parse_entry
from pelctl.core.find import StreamSearched
from pelctl.core.models import parse_id
from pelctl.core.trace.audit import read_audit
from pelctl.core.trace.fields import last_value, lineage_of, valid_id
from pelctl.core.trace.model import MAX_COPIES, AuditRead
from pelctl.core.trace.shape import Shape
from pelctl.redis.connection import Connection
from pelctl.redis.entries import EntryScan
from pelctl.redis.errors import redis_errors


@dataclass
class Found:
    stream: bytes
    id: bytes
    flat: list[bytes] | None
    is_dlq: bool
    traced: bool = False
    inferred: bool = False  # a dead letter known only from a replayed copy's marker


@dataclass
class Search:
    """The chain's search, in the streams being traced only: what it found and read."""

    conn: Connection
    source: bytes
    shapes: dict[bytes, Shape]
    max_server_ms: float
    progress: Callable[[float | None, int], None] | None
    should_stop: Callable[[], bool] | None
    found: dict[tuple[bytes, bytes], Found] = field(default_factory=dict)
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
                self.found[(key, eid)] = Found(key, eid, list(flat), key != self.source)
                s.matches += 1
            self.total_read += len(page)
            if self.progress is not None:
                part = engine.progress() or 0.0
                self.progress((index + part) / len(keys), self.total_read)
        st = engine.stats
        s.scanned, s.calls, s.max_call_ms = st.entries, st.calls, st.max_call_ms
        s.first_id, s.last_id, s.complete = st.first_id, st.last_id, True
        s.length = None


def identify(
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
            claimed = lineage_of(asked_flat, prefix).original_id
            if claimed is not None:
                original = claimed
    elif stream != source:
        # A dead letter no longer in its DLQ: replayed, perhaps. Its replayed copy names it
        # (the replay marker) and, with its lineage, the message's id.
        replay = _find_replay(conn, source, entry_id, prefix, max_server_ms, should_stop)
        if replay is not None:
            claimed = lineage_of(replay, prefix).original_id
            original = claimed if claimed is not None else entry_id
    if original != entry_id and not valid_id(original):
        notes.append(
            f"the entry names {escape(original)} as its original id, which is not a stream "
            f"id: copies claiming it are looked for in the whole of {escape(source)}"
        )
    return asked_flat, original


def follow(
    search: Search,
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
        if valid_id(original):
            start = min(original, entry_id, key=parse_id) if stream == source else original
        traced_in_source = entry_id if stream == source else None

        def in_source(eid: bytes, flat: list[bytes]) -> bool:
            if eid in (original, traced_in_source):
                return True
            # C-level membership first: most entries do not hold the id at all.
            return original in flat and last_value(flat, original_key) == original

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
        if last_value(flat, source_key) != source:
            return False
        claimed = last_value(flat, original_key)
        if claimed is not None:
            return claimed == original
        return last_value(flat, dlq_id_key) in chain_source_ids

    return in_dlq


def audit_chain(
    search: Search, dlq_keys: Sequence[bytes], prefix: str, log: Path | None
) -> AuditRead:
    """The audit log's lines about the chain. Dead letters replayed since (the replay removed
    them) are known from the replayed copies' marker and added to the chain, in the
    dead-letter stream a replay line names."""
    source, found, shapes = search.source, search.found, search.shapes
    letters = {eid for (k, eid) in found if k != source}
    replayed = [
        mark
        for f in found.values()
        if f.flat is not None and not f.is_dlq
        for mark in [last_value(f.flat, marker_field(prefix))]
        if mark is not None and mark not in letters and valid_id(mark)
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
        found[(key, mark)] = Found(key, mark, None, True, inferred=True)
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
            if letter_id in flat and last_value(flat, marker) == letter_id:
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
