"""Trimming that never loses a message (docs/trim.md): what a careless trim already lost,
and what bounds a safe one.

**Detection** (pure, from ``XINFO STREAM`` and ``XINFO GROUPS``): a trim removes the oldest
entries. When it reaches past a group's last-delivered id, the entries between that id and
the stream's new first entry were removed before the group read them. :func:`unread_loss`
counts them: on Redis 7.0+ ``entries-added - entries-read - length`` (every entry added
after the group's position, minus those still in the stream) is exact while the group's
last-delivered id is below the first entry. Once the group reads past the gap, Redis 8.2+
re-counts its position (the loss is forgotten), while Redis 7.0/7.2 and Valkey 8 keep
counting on: their lag stays inflated by the loss, and ``lag - length`` is a lower bound.

**The safe bound** (:func:`safe_trim`): the lowest id any group still needs, the smaller of
its next undelivered entry (just past last-delivered-id) and its oldest pending entry still
in the stream (pending entries already trimmed away, ghosts, hold nothing). Everything
below it was read and acknowledged by every group. The repair (``pelctl trim --safe``,
:mod:`pelctl.core.repairs.trim`) removes entries below it in bounded steps, each one a
script that computes the bound again, atomically with its ``XTRIM``.

How many entries lie below the bound is counted, not guessed, where that is cheap: from a
group's read counter when the server keeps it exact (:func:`counters_exact`), else by an
``XRANGE`` walk from the nearest known position, bounded (``count_limit`` entries, each
call under ``max_server_ms``); past the bound the rest is estimated from the entries'
times, and said so (``exact`` False). Bytes: ``MEMORY USAGE key SAMPLES n`` scaled by the
share of entries, never a full walk.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.exceptions as rex

from pelctl.core.models import TrimEstimate, UnreadLoss, id_ms, parse_id
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import Options
from pelctl.redis.capabilities import Capabilities
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.meter import timed
from pelctl.redis.replies import pairs
from pelctl.redis.replies import rows as reply_rows
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS

# The largest value of either part of a stream id.
ID_PART_MAX = 2**64 - 1
# Entries an inspect counts (XRANGE walk) before it estimates the rest; a trim's dry run
# counts up to TRIM_COUNT_LIMIT.
COUNT_LIMIT = 10_000
TRIM_COUNT_LIMIT = 200_000
# MEMORY USAGE samples (Redis' own default: 5 listpack nodes, scaled to the whole stream).
MEMORY_SAMPLES = 5
# What bounds a safe trim.
PENDING, UNDELIVERED = "pending", "undelivered"  # a group's oldest pending / next unread entry
NO_GROUPS, EMPTY, MINID, MAXLEN = "no-groups", "empty", "minid", "maxlen"
TRIMMED, TRIMMED_OR_DELETED = "trimmed", "trimmed-or-deleted"


# -- ids ---------------------------------------------------------------------------------------


def next_id(entry_id: bytes) -> bytes | None:
    """The smallest id after ``entry_id`` (None after the largest possible id)."""
    ms, seq = parse_id(entry_id)
    if seq < ID_PART_MAX:
        return b"%d-%d" % (ms, seq + 1)
    if ms < ID_PART_MAX:
        return b"%d-0" % (ms + 1)
    return None


def id_lt(a: bytes, b: bytes) -> bool:
    return parse_id(a) < parse_id(b)


def _is_zero(entry_id: bytes | None) -> bool:
    return entry_id is None or parse_id(entry_id) == (0, 0)


# -- what a stream and a group say -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StreamFacts:
    """The parts of ``XINFO STREAM`` (without FULL) that detection and the bound need."""

    length: int
    first_id: bytes | None  # None: the stream is empty
    last_id: bytes | None  # the last entry's id (None: empty)
    last_generated: bytes | None  # last-generated-id: the highest id ever added
    entries_added: int | None  # 7.0+
    max_deleted_id: bytes | None  # 7.0+: the highest id removed by XDEL (0-0: none)


def facts_of_info(info: dict[bytes, Any]) -> StreamFacts:
    """The facts in an ``XINFO STREAM`` reply (its flat pairs as a dict)."""
    first, last = info.get(b"first-entry"), info.get(b"last-entry")
    added = info.get(b"entries-added")
    return StreamFacts(
        length=int(info[b"length"]),
        first_id=first[0] if first else None,
        last_id=last[0] if last else None,
        last_generated=info.get(b"last-generated-id"),
        entries_added=int(added) if added is not None else None,
        max_deleted_id=info.get(b"max-deleted-entry-id"),
    )


def unread_loss(
    facts: StreamFacts, last_delivered: bytes, entries_read: int | None, lag: int | None
) -> tuple[int | None, UnreadLoss | None]:
    """(what the group can still read, what a trim removed before it read it).

    - The group read everything ever added (last-delivered-id at or past the stream's
      last-generated-id): nothing is lost, nothing to read.
    - Its last-delivered id is below the first entry (or the stream is empty): every entry
      still there is readable, and ``entries-added - entries-read - length`` entries were
      added after its position and are gone: exact (7.0+, the group's counter known).
      Unknown counter: "some, count unknown", unless nothing was ever removed from the
      stream (``entries-added == length``).
    - Otherwise nothing below the first entry is unread now. The server's lag is what it
      can read, unless it is larger than the stream: a 7.0/7.2 or Valkey 8 server kept
      counting the group's reads across a gap, so at least ``lag - length`` were lost.

    The cause is ``trimmed-or-deleted`` when entries after the group's position were also
    deleted one by one (XDEL: max-deleted-entry-id past its last-delivered id)."""
    last = parse_id(last_delivered)
    if facts.last_generated is not None and last >= parse_id(facts.last_generated):
        return 0, None
    n = facts.length
    deleted_after = not _is_zero(facts.max_deleted_id) and parse_id(facts.max_deleted_id) > last  # type: ignore[arg-type]
    cause = TRIMMED_OR_DELETED if deleted_after else TRIMMED
    if facts.first_id is None or last < parse_id(facts.first_id):
        added = facts.entries_added
        if added is not None and entries_read is not None:
            lost = added - entries_read - n
            return n, (UnreadLoss(lost, True, cause) if lost > 0 else None)
        if added is not None and added == n:  # nothing was ever removed from the stream
            return n, None
        return n, UnreadLoss(None, False, cause)
    if lag is not None and lag > n:
        return None, UnreadLoss(lag - n, False, TRIMMED)
    return lag, None


def lost_text(loss: UnreadLoss) -> str:
    """``lost 400 entries to trimming before reading them`` (and its variants)."""
    how = "trimming" if loss.cause == TRIMMED else "trimming or XDEL"
    if loss.count is None:
        return f"lost entries to {how} before reading them (how many is not known)"
    noun = "entry" if loss.count == 1 else "entries"
    least = "" if loss.exact else "at least "
    return f"lost {least}{loss.count:,} {noun} to {how} before reading them"


def trimmed_ghosts(facts: StreamFacts, pel_min_id: bytes | None) -> str | None:
    """Whether a group's ghosts were made by a trim: ``all`` (no entry at or above the first
    one was ever deleted with XDEL, so every ghost lies below it), ``some`` (its lowest
    pending id is below the first entry), None (not known to be)."""
    if facts.first_id is None:
        return "all"
    if _is_zero(facts.max_deleted_id) or id_lt(facts.max_deleted_id, facts.first_id):  # type: ignore[arg-type]
        return "all"
    if pel_min_id is not None and id_lt(pel_min_id, facts.first_id):
        return "some"
    return None


def add_losses(losses: Sequence[UnreadLoss | None]) -> UnreadLoss | None:
    """Several groups' losses as one (a stream's, in ``pelctl streams``): the known counts
    added up; not exact when one is a lower bound or unknown."""
    found = [x for x in losses if x is not None]
    if not found:
        return None
    counts = [x.count for x in found if x.count is not None]
    exact = all(x.exact and x.count is not None for x in found)
    cause = TRIMMED_OR_DELETED if any(x.cause == TRIMMED_OR_DELETED for x in found) else TRIMMED
    return UnreadLoss(sum(counts) if counts else None, exact, cause)


def counters_exact(caps: Capabilities) -> bool:
    """Whether a group's read counter (entries-read) stays exact across trims: Redis 8.2+
    re-counts a group's position when it reads past a gap (redis/redis#13473, #13958);
    7.0/7.2 and Valkey 8 keep counting on (valkey-io/valkey#1952 came later)."""
    return caps.server == "redis" and caps.version[:2] >= (8, 2)


# -- the safe bound --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupBound:
    """Where one group holds a safe trim."""

    group: bytes
    last_delivered_id: bytes
    pending: int
    entries_read: int | None
    lag: int | None
    oldest_pending: bytes | None  # its oldest pending entry still in the stream
    oldest_consumer: bytes | None  # who holds it
    oldest_idle_ms: int | None
    ghosts_below: bool  # pending entries below the first entry (trimmed away: ghosts)
    bound: bytes | None  # entries below this id it no longer needs (None: it holds nothing)
    reason: str  # PENDING | UNDELIVERED
    readable: int | None
    trimmed_unread: UnreadLoss | None


@dataclass(frozen=True, slots=True)
class SafeTrim:
    """What a safe trim of ``stream`` can remove now: the entries below ``bound`` (capped by
    ``keep``: never fewer entries left than that), how many and about how many bytes."""

    stream: bytes
    facts: StreamFacts
    groups: tuple[GroupBound, ...]
    bound: bytes | None  # None: no id bound (no group, no --minid: only --maxlen)
    reason: str  # what sets the bound: PENDING, UNDELIVERED, MINID, NO_GROUPS, EMPTY
    bounded_by: bytes | None  # the group, for PENDING / UNDELIVERED
    keep: int | None  # --maxlen: entries always left
    minid: bytes | None  # --minid: nothing at or above it is removed
    below: int  # entries below the bound (the whole stream without one)
    entries: int  # what the trim would remove: ``below``, capped by ``keep``
    exact: bool  # False: ``below`` was estimated past a bounded count
    bytes: int | None  # about how much memory that frees (None: MEMORY USAGE refused)
    memory: int | None  # the stream's MEMORY USAGE (sampled)
    counted_calls: int = 0  # XRANGE calls the count made
    max_call_ms: float = 0.0

    @property
    def limited_by(self) -> str:
        """What stops the trim: the bound's reason, or MAXLEN when ``keep`` binds first."""
        if self.keep is not None and self.entries < self.below:
            return MAXLEN
        return self.reason

    def estimate(self) -> TrimEstimate:
        return TrimEstimate(
            self.bound, self.bounded_by, self.limited_by, self.entries, self.exact, self.bytes
        )


def group_bounds(
    facts: StreamFacts,
    rows: Sequence[dict[bytes, Any]],
    edges: Sequence[tuple[PendingRow | None, bool]],
) -> list[GroupBound]:
    """Each group's bound, from its ``XINFO GROUPS`` row and its :func:`pending_edges`."""
    out: list[GroupBound] = []
    for row, (oldest, ghosts_below) in zip(rows, edges, strict=True):
        oldest_id = oldest[0] if oldest is not None else None
        last = row[b"last-delivered-id"]
        read = row.get(b"entries-read")
        lag = row.get(b"lag")
        entries_read = int(read) if read is not None else None
        lag_n = int(lag) if lag is not None else None
        pending = int(row.get(b"pending") or 0)
        bound, reason = next_id(last), UNDELIVERED
        if oldest_id is not None and (bound is None or id_lt(oldest_id, bound)):
            bound, reason = oldest_id, PENDING
        readable, loss = unread_loss(facts, last, entries_read, lag_n)
        out.append(
            GroupBound(
                group=row[b"name"],
                last_delivered_id=last,
                pending=pending,
                entries_read=entries_read,
                lag=lag_n,
                oldest_pending=oldest_id,
                oldest_consumer=oldest[1] if oldest is not None else None,
                oldest_idle_ms=int(oldest[2]) if oldest is not None else None,
                ghosts_below=ghosts_below,
                bound=bound,
                reason=reason,
                readable=readable,
                trimmed_unread=loss,
            )
        )
    return out


def lowest_bound(
    groups: Sequence[GroupBound], minid: bytes | None
) -> tuple[bytes | None, str, bytes | None]:
    """(the lowest bound of ``groups`` and ``minid``, its reason, the group that sets it)."""
    bound, reason, by = minid, MINID, None
    for g in groups:
        if g.bound is not None and (bound is None or id_lt(g.bound, bound)):
            bound, reason, by = g.bound, g.reason, g.group
    if bound is None and not groups:
        reason = NO_GROUPS
    return bound, reason, by


def read_stream(conn: Connection, stream: bytes) -> tuple[dict[bytes, Any], list[dict]]:
    """``XINFO STREAM`` (as a dict) and ``XINFO GROUPS`` (rows) in one round trip."""
    with redis_errors("XINFO"), timed(round_trips=1):
        pipe = conn.raw(stream).pipeline(transaction=False)
        pipe.execute_command("XINFO", "STREAM", stream)
        pipe.execute_command("XINFO", "GROUPS", stream)
        info, groups = pipe.execute()
    return pairs(info), reply_rows(groups)


# A raw XPENDING row: [id, consumer, idle-ms, deliveries].
PendingRow = Sequence[Any]


def pending_edges(
    conn: Connection, stream: bytes, first_id: bytes | None, names: Sequence[bytes]
) -> list[tuple[PendingRow | None, bool]]:
    """Per group: its oldest pending entry at or above ``first_id`` (its XPENDING row; None:
    none), and whether
    it has pending entries below it (trimmed away: ghosts). Two pipelined ``XPENDING ...
    COUNT 1`` each, O(log n) apiece."""
    if not names:
        return []
    if first_id is None:  # an empty stream: every pending entry is a ghost
        return [(None, True)] * len(names)
    with redis_errors("XPENDING"), timed(round_trips=1):
        pipe = conn.raw(stream).pipeline(transaction=False)
        for name in names:
            pipe.execute_command("XPENDING", stream, name, first_id, "+", 1)
            pipe.execute_command("XPENDING", stream, name, "-", b"(" + first_id, 1)
        replies = pipe.execute()
    return [
        (replies[i][0] if replies[i] else None, bool(replies[i + 1]))
        for i in range(0, len(replies), 2)
    ]


def safe_trim(
    conn: Connection,
    stream: bytes,
    *,
    keep: int | None = None,
    minid: bytes | None = None,
    count_limit: int = COUNT_LIMIT,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    info: dict[bytes, Any] | None = None,
    rows: Sequence[dict[bytes, Any]] | None = None,
) -> SafeTrim:
    """What a safe trim of ``stream`` would remove now (read-only). ``info`` and ``rows``:
    the ``XINFO STREAM`` / ``XINFO GROUPS`` replies already read (inspect)."""
    if info is None or rows is None:
        info, rows = read_stream(conn, stream)
    facts = facts_of_info(info)
    names = [r[b"name"] for r in rows]
    groups = group_bounds(facts, rows, pending_edges(conn, stream, facts.first_id, names))
    bound, reason, by = lowest_bound(groups, minid)
    n = facts.length
    counter = _Counter(conn, stream, facts, max_server_ms)
    if n == 0:
        below, exact, reason = 0, True, EMPTY if reason != NO_GROUPS else reason
    elif bound is None:
        below, exact = (n, True) if keep is not None else (0, True)
    else:
        below, exact = counter.below(bound, _anchors(conn.caps, facts, groups), count_limit)
    entries = below if keep is None else max(0, min(below, n - keep))
    memory = memory_usage(conn, stream) if entries else None
    size = int(memory * entries / n) if memory is not None and n else None
    return SafeTrim(
        stream=stream,
        facts=facts,
        groups=tuple(groups),
        bound=bound,
        reason=reason,
        bounded_by=by,
        keep=keep,
        minid=minid,
        below=below,
        entries=entries,
        exact=exact,
        bytes=size,
        memory=memory,
        counted_calls=counter.calls,
        max_call_ms=counter.max_call_ms,
    )


def memory_usage(conn: Connection, stream: bytes, samples: int = MEMORY_SAMPLES) -> int | None:
    """``MEMORY USAGE stream SAMPLES n`` (a few listpack nodes, scaled: never a full walk);
    None when the server or its ACL refuses it."""
    try:
        with timed(round_trips=1):
            value = conn.raw(stream).execute_command("MEMORY", "USAGE", stream, "SAMPLES", samples)
    except (rex.ResponseError, rex.NoPermissionError):
        return None
    return int(value) if value is not None else None


# -- a trim's options and plan (the repair is pelctl.core.repairs.trim) ------------------------


@dataclass(frozen=True, slots=True)
class TrimOptions(Options):
    """``--maxlen`` (never fewer entries left), ``--minid`` (nothing at or above it goes),
    ``--step`` (entries per step; None: adapts to ``max_server_ms``)."""

    keep: int | None = None
    minid: bytes | None = None
    step: int | None = None
    max_server_ms: float = DEFAULT_MAX_SERVER_MS


@dataclass(frozen=True)
class TrimPlan(Plan):
    """A trim's plan: what :func:`pelctl.core.trim.safe_trim` found (the per-group bounds,
    the bound, the entries and bytes below it). The confirmation counts entries."""

    trim: SafeTrim | None = None  # None: read from a plan file, not planned again yet
    planned: int = 0  # the entries the plan counted (a plan file's, before it is planned again)

    @property
    def safe(self) -> SafeTrim:
        assert self.trim is not None, "a trim plan read from a file is planned again first"
        return self.trim

    @property
    def count(self) -> int:
        return self.trim.entries if self.trim is not None else self.planned

    @property
    def matched(self) -> int:
        return self.count


# -- counting the entries below an id --------------------------------------------------------

# An anchor: an id whose count of entries at or below it is known exactly.
Anchor = tuple[bytes, int]


def _anchors(caps: Capabilities, facts: StreamFacts, groups: Sequence[GroupBound]) -> list[Anchor]:
    """Ids of the stream with a known count of entries at or below them: the first and the
    last entry, and each group's last-delivered id when its read counter is trusted.

    A counter c of a group at id L in the stream means ``c - (entries-added - length)``
    entries at or below L, provided every entry ever removed is at or below L: trims remove
    the oldest entries (below the first, so below L), ``ACKED`` removes only entries every
    group has read, and an XDEL'd entry is at most max-deleted-entry-id. The counter itself
    is trusted on servers that keep it exact (:func:`counters_exact`) or when nothing was
    ever removed (``entries-added == length``), and never when the lag is larger than the
    stream (an inflated counter)."""
    n = facts.length
    out: list[Anchor] = []
    if facts.first_id is not None and facts.last_id is not None:
        out += [(facts.first_id, 1), (facts.last_id, n)]
    added = facts.entries_added
    if added is None or facts.first_id is None:
        return out
    trusted = counters_exact(caps) or added == n
    if not trusted:
        return out
    for g in groups:
        last = g.last_delivered_id
        if g.entries_read is None or g.lag is None or g.lag > n:
            continue
        if id_lt(last, facts.first_id):
            continue
        if not _is_zero(facts.max_deleted_id) and id_lt(last, facts.max_deleted_id):  # type: ignore[arg-type]
            continue
        at_or_below = g.entries_read - (added - n)
        if 0 < at_or_below <= n:
            out.append((last, at_or_below))
    return out


class _Counter:
    """Entries of the stream in an id range, by bounded ``XRANGE`` pages (each call under
    half of ``max_server_ms``: the page size adapts)."""

    def __init__(
        self, conn: Connection, stream: bytes, facts: StreamFacts, max_server_ms: float
    ) -> None:
        self.raw = conn.raw(stream)
        self.stream = stream
        self.facts = facts
        self.target_ms = max_server_ms / 2
        self.page = 100
        self.calls = 0
        self.max_call_ms = 0.0

    def below(self, bound: bytes, anchors: Sequence[Anchor], limit: int) -> tuple[int, bool]:
        """Entries below ``bound``: counted from the anchor nearest to it (by time), with
        at most ``limit`` entries read; (count, exact)."""
        f = self.facts
        n = f.length
        assert f.first_id is not None and f.last_id is not None
        if not id_lt(f.first_id, bound):
            return 0, True
        if id_lt(f.last_id, bound):
            return n, True
        target = id_ms(bound)
        anchor, at_or_below = min(anchors, key=lambda a: abs(id_ms(a[0]) - target))
        if id_lt(anchor, bound):  # entries in (anchor, bound)
            counted, done = self.count(b"(" + anchor, b"(" + bound, limit)
            total = at_or_below + counted
        else:  # entries in [bound, anchor]
            counted, done = self.count(bound, anchor, limit)
            total = at_or_below - counted
        return max(0, min(n, total)), done

    def count(self, start: bytes, end: bytes, limit: int) -> tuple[int, bool]:
        """Entries in [start, end] (``(`` makes a bound exclusive); past ``limit`` entries
        read, the rest is estimated from the stream's entries per millisecond."""
        counted = 0
        cursor = start
        while counted < limit:
            t0 = time.perf_counter()
            with redis_errors("XRANGE"), timed(round_trips=1):
                page = self.raw.execute_command(
                    "XRANGE", self.stream, cursor, end, "COUNT", self.page
                )
            ms = (time.perf_counter() - t0) * 1000.0
            self.calls += 1
            self.max_call_ms = max(self.max_call_ms, ms)
            counted += len(page)
            if len(page) < self.page:
                return counted, True
            cursor = b"(" + page[-1][0]
            factor = max(0.25, min(self.target_ms / max(ms, 0.05), 2.0))
            self.page = int(max(10, min(10_000, self.page * factor)))
        return counted + self._estimate(cursor.lstrip(b"("), end.lstrip(b"(")), False

    def _estimate(self, start: bytes, end: bytes) -> int:
        """Entries between two ids, from the stream's average entries per millisecond."""
        f = self.facts
        assert f.first_id is not None and f.last_id is not None
        span = max(1, id_ms(f.last_id) - id_ms(f.first_id))
        per_ms = f.length / span
        return max(0, int((id_ms(end) - id_ms(start)) * per_ms))
