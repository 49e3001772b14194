"""The dead-letter queue lifecycle: list, show, stats, replay (exactly once), purge.

A dead-letter stream (DLQ) holds entries moved there by ``pelctl dlq move`` (or by
``requeue --max-retries``, the reclaim loop, ``ReliableConsumer``): the original fields,
untouched, followed by the envelope of SPEC §5a (``_dlq_source``, ``_dlq_group``,
``_dlq_id``, ``_dlq_owner``, ``_dlq_deliveries``, ``_dlq_idle_ms``, ``_dlq_reason``,
``_dlq_at``; the ``_`` prefix is configurable).

Reading is streamed: :func:`iter_entries` walks a DLQ in bounded ``XRANGE`` / ``XREVRANGE``
pages (exclusive ``(id`` starts), so a DLQ of any size lists with flat memory.

Replay and purge are declared mutations (``dlq-replay``, ``dlq-purge``) driven by the same
plan/apply API as the repairs (:mod:`pelctl.core.mutations`)::

    p = plan_dlq(conn, "dlq-replay", b"orders:dlq", DlqTargets(reason="timeout"))
    result = mutations.apply(conn, p, progress=...)

Exactly once (see docs/dlq.md):

- when the DLQ and the target share a cluster slot (always on a standalone server), one
  script per batch checks the entry is still in the DLQ, XADDs the copy to the target and
  XDELs the entry (``dlq_replay.lua``);
- across slots, three ordered steps: read the entries; on the target's slot, one script
  XADDs each copy *and* records the DLQ id in a marker set beside the target (a sorted set,
  see :func:`marker_key`) unless the marker is there already (``dlq_replay_add.lua``);
  then XDEL on the DLQ's slot. A run killed anywhere between them is rerun safely: the
  marker makes the rerun skip the copy and only delete. The DLQ entry is never deleted
  before its copy exists; a copy is never made twice.

Every copy carries its lineage (:mod:`pelctl.core.lineage`: ``<prefix>prior_deliveries``,
``<prefix>original_id``) and ``<prefix>replayed_from = <DLQ id>`` (the replay marker field),
unless ``no_lineage`` (``--no-lineage``): then the copy is the original fields alone. The
marker *set* of the cross-slot path is a separate key: exactly once holds either way.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

import redis.exceptions as rex

from pelctl.base.binary import escape
from pelctl.base.errors import NotFound, StreamNotFound, UsageError, WrongType
from pelctl.core import lineage
from pelctl.core.models import id_ms
from pelctl.core.mutations import (
    APPLIED,
    ItemResult,
    Mutation,
    Options,
    Plan,
    PlanItem,
    Progress,
    RepairResult,
    Targets,
    build_result,
    declare,
    get,
    name_list,
    on_server,
    status_of,
)
from pelctl.core.mutations import plan as plan_mutation
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import field_pairs
from pelctl.redis.scripts import (
    DEFAULT_BATCH,
    DEFAULT_DEPTH,
    Call,
    hash_tag,
    key_slot,
    round_trip,
    same_slot,
    script,
    xadd_fits,
)

# Entries per XRANGE page: one call stays well under a millisecond for ordinary entries.
PAGE = 500
# How long the cross-slot replay markers are kept (a rerun after a kill must come within it).
MARKER_RETENTION_MS = 7 * 86_400_000
# Payload bytes per replay script call, and per round trip (a client's query buffer is
# limited to 1 GiB by default: rounds of entries with 1 MiB values must not reach it).
CALL_BYTES = 1024 * 1024
ROUND_BYTES = 16 * 1024 * 1024
# Attempts of an entry too wide for a script, when the marker set changes under WATCH.
WATCH_ATTEMPTS = 5
FORCE_CROSS_SLOT_ENV = "PELCTL_FORCE_CROSS_SLOT"
ENVELOPE = ("source", "group", "id", "owner", "deliveries", "idle_ms", "reason", "at")

_ID = re.compile(rb"^\d+(-\d+)?$")
_FULL_ID = re.compile(r"^\d+-\d+$")
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/\s*(\d*)\s*(s|sec|second|m|min|minute|h|hour))?\s*$")
_RATE_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600,
               "hour": 3600}  # fmt: skip


# -- entries -----------------------------------------------------------------------------------

Pairs = tuple[tuple[bytes, bytes], ...]


@dataclass(frozen=True, slots=True)
class DlqEntry:
    """One dead-letter entry: its envelope parsed, its original fields apart, its lineage.

    ``original_id`` is the message's first id (the ``<prefix>original_id`` among the original
    fields, else ``_dlq_id``); ``dlq_id`` is ``_dlq_id`` (the id of the copy that was
    moved); ``deliveries`` is ``_dlq_deliveries`` (the moved copy's delivery count) and
    ``prior_deliveries`` the ``<prefix>prior_deliveries`` of earlier copies:
    :attr:`total_deliveries` is every delivery of the message."""

    id: bytes
    source: bytes | None
    group: bytes | None
    original_id: bytes | None
    owner: bytes | None
    deliveries: int | None
    idle_ms: int | None
    reason: str | None
    at_ms: int | None
    fields: Pairs  # the original fields (envelope removed), in order
    raw: Pairs = ()  # every field of the DLQ entry, envelope included, in order
    dlq: bytes = b""
    dlq_id: bytes | None = None
    prior_deliveries: int | None = None

    @property
    def time_ms(self) -> int:
        """When it was dead-lettered: ``_dlq_at``, else the DLQ id's time."""
        return self.at_ms if self.at_ms is not None else id_ms(self.id)

    @property
    def enveloped(self) -> bool:
        return self.source is not None

    @property
    def total_deliveries(self) -> int | None:
        """Deliveries of every copy of the message: prior + ``_dlq_deliveries`` (None when
        neither is known)."""
        if self.deliveries is None and self.prior_deliveries is None:
            return None
        return (self.prior_deliveries or 0) + (self.deliveries or 0)


@cache
def envelope_names(prefix: str = "_") -> dict[bytes, bytes]:
    """``{b"_dlq_source": b"source", ...}``: the envelope's field names for ``prefix``."""
    head = prefix.encode() + b"dlq_"
    return {head + name.encode(): name.encode() for name in ENVELOPE}


def parse_entry(entry_id: bytes, flat: Sequence[bytes], prefix: str = "_",
                dlq: bytes = b"") -> DlqEntry:  # fmt: skip
    """Split a raw ``[field, value, ...]`` into envelope and original fields.

    A field name repeated (an entry dead-lettered twice with ``--keep-envelope`` in between)
    takes its last value: the newest envelope is the one appended last.
    """
    names = envelope_names(prefix)
    env: dict[bytes, bytes] = {}
    fields: list[tuple[bytes, bytes]] = []
    raw = field_pairs(flat)
    for k, v in raw:
        name = names.get(k)
        if name is None:
            fields.append((k, v))
        else:
            env[name] = v

    def num(name: bytes) -> int | None:
        try:
            return int(env[name])
        except (KeyError, ValueError):
            return None

    reason = env.get(b"reason")
    deliveries = num(b"deliveries")
    original_id, prior = lineage.of_dead_letter(fields, env.get(b"id"), deliveries, prefix)
    return DlqEntry(
        id=entry_id,
        source=env.get(b"source"),
        group=env.get(b"group"),
        original_id=original_id,
        owner=env.get(b"owner"),
        deliveries=deliveries,
        idle_ms=num(b"idle_ms"),
        reason=reason.decode("utf-8", "replace") if reason is not None else None,
        at_ms=num(b"at"),
        fields=tuple(fields),
        raw=raw,
        dlq=dlq,
        dlq_id=env.get(b"id"),
        prior_deliveries=prior,
    )


# -- filters and option parsing ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DlqFilter:
    """What ``--source --reason --since --until`` select. Time bounds are stream ids (the time
    an entry entered the DLQ), so they narrow the XRANGE itself."""

    source: bytes | None = None  # exact, or a glob when it holds * ? [
    reason: str | None = None  # case-insensitive substring of _dlq_reason
    start: bytes = b"-"
    end: bytes = b"+"

    @property
    def active(self) -> bool:
        return (self.source is not None or self.reason is not None or self.start != b"-"
                or self.end != b"+")  # fmt: skip

    def matches(self, e: DlqEntry) -> bool:
        if self.source is not None:
            if e.source is None:
                return False
            if any(c in self.source for c in b"*?["):
                if not fnmatch.fnmatchcase(e.source, self.source):
                    return False
            elif e.source != self.source:
                return False
        if self.reason is not None:
            return e.reason is not None and self.reason.casefold() in e.reason.casefold()
        return True


def parse_time_bound(text: str, *, now_ms: int | None = None, end: bool = False) -> bytes:
    """``--since`` / ``--until`` / ``--older-than`` as a stream-id bound.

    A duration (``30m``, ``2d``; a bare number is milliseconds) means that long ago; an
    ISO-8601 time (``2025-01-31T14:00``, UTC unless an offset is given) is absolute; a full
    stream id (``1700000000000-0``) is used as is.
    """
    from pelctl.base.durations import parse_duration_ms

    raw = text.strip()
    if _FULL_ID.match(raw):
        if any(int(part) >= 2**64 for part in raw.split("-")):
            raise UsageError(f"stream id {raw[:60]!r} is out of range",
                             hint="each part of a stream id is below 2^64, at most "
                             "18446744073709551615-18446744073709551615")  # fmt: skip
        return raw.encode()
    now = int(time.time() * 1000) if now_ms is None else now_ms
    ms: int | None = None
    if re.match(r"^\d{4}-\d{2}-\d{2}", raw):
        try:
            when = datetime.fromisoformat(raw.replace("z", "Z"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            ms = int(when.timestamp() * 1000)
        except (ValueError, OverflowError):
            raise UsageError(f"invalid time {text[:60]!r}",
                             hint="use a duration (30m, 2d), an ISO time "
                             "(2025-01-31T14:00Z) or a stream id") from None  # fmt: skip
    else:
        ms = now - parse_duration_ms(raw)
    ms = max(ms, 0)
    # An end bound given in milliseconds covers every sequence number of that millisecond.
    return str(ms).encode() if end else f"{ms}-0".encode()


def parse_rate(text: str) -> float:
    """``200/s``, ``1000/m``, ``50/h``, ``5/10s``; a bare number is per second."""
    m = _RATE.match(text.lower())
    if not m:
        raise UsageError(f"invalid rate {text!r}", hint="e.g. --rate 200/s, 1000/m, 50/h")
    count = float(m.group(1))
    per = int(m.group(2) or 1) * _RATE_UNITS[m.group(3) or "s"]
    if count <= 0 or per <= 0:
        raise UsageError(f"invalid rate {text!r}: must be more than 0")
    return count / per


def normalize_ids(ids: Iterable[bytes]) -> tuple[bytes, ...]:
    out: dict[bytes, None] = {}
    for raw in ids:
        entry_id = raw.strip()
        if not _ID.match(entry_id) or any(int(p) >= 2**64 for p in entry_id.split(b"-")):
            raise UsageError(f"not a stream id: {escape(raw)}",
                             hint="ids look like 1700000000000-0")  # fmt: skip
        if b"-" not in entry_id:
            entry_id += b"-0"
        out[entry_id] = None
    return tuple(out)


# -- finding DLQs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DlqInfo:
    key: bytes
    length: int
    enveloped: bool  # its newest entry carries the envelope


def require_dlq(conn: Connection, key: bytes) -> int:
    """The DLQ's length; NotFound (exit 3) when missing, WrongType when not a stream."""
    raw = conn.raw(key)
    with redis_errors("dlq"):
        kind = raw.execute_command("TYPE", key)
        if kind == b"stream":
            return int(raw.execute_command("XLEN", key))
    if kind == b"none":
        raise StreamNotFound(
            f"dead-letter stream {escape(key)} not found",
            hint="nothing was dead-lettered there yet; list the DLQs: pelctl dlq list",
        )
    raise WrongType(
        f"key {escape(key)} is a {kind.decode(errors='replace')}, not a dead-letter stream"
    )


DLQ_SUFFIX = b":dlq"


def is_dlq_name(key: bytes) -> bool:
    """The one rule for "this stream is a dead-letter stream" when nobody named it: its name
    is ``<stream>:dlq`` (the default of ``dlq move``, ``requeue --max-retries``, the reclaim
    loop). Whatever its entries hold, and however empty it is: a producer that can write
    ``_dlq_source`` into a stream does not make it a DLQ. ``streams``' KIND column, the TUI,
    ``dlq list``/``stats``/``replay``/``purge`` without a DLQ argument all use it; any other
    dead-letter stream is used when named."""
    return len(key) > len(DLQ_SUFFIX) and key.endswith(DLQ_SUFFIX)


def dlq_source_of(key: bytes) -> bytes | None:
    """The stream a conventionally named DLQ belongs to: ``orders:dlq`` -> ``orders``."""
    return key[: -len(DLQ_SUFFIX)] if is_dlq_name(key) else None


def is_dead_letter(flat: Sequence[bytes], prefix: str = "_") -> bool:
    """Whether an *entry* is a dead letter: it carries ``<prefix>dlq_source``; a copy
    replayed with ``--keep-envelope`` does too, but ends with the replay marker field (the
    envelope of a dead letter always comes last). It never decides whether a *stream* is a
    DLQ (:func:`is_dlq_name` does)."""
    if prefix.encode() + b"dlq_source" not in flat[0::2]:
        return False
    return not (len(flat) >= 2 and flat[-2] == marker_field(prefix))


def discover(conn: Connection, match: bytes | None = None, prefix: str = "_") -> list[DlqInfo]:
    """Every dead-letter stream by its name (:func:`is_dlq_name`): ``SCAN ... MATCH *:dlq
    TYPE stream`` on every primary (``match`` narrows it further). An emptied DLQ is still
    one; a stream of another name is never one, whatever its entries carry. Sorted by
    name."""
    found: list[DlqInfo] = []
    with redis_errors("dlq discovery"):
        for node, keys in conn.scan_stream_pages(match or b"*" + DLQ_SUFFIX):
            keys = [k for k in keys if is_dlq_name(k)]
            if not keys:
                continue
            pipe = node.pipeline(transaction=False)
            for key in keys:
                pipe.execute_command("XREVRANGE", key, "+", "-", "COUNT", 1)
                pipe.execute_command("XLEN", key)
            replies = pipe.execute(raise_on_error=False)
            for i, key in enumerate(keys):
                last, length = replies[2 * i], replies[2 * i + 1]
                if isinstance(last, Exception) or isinstance(length, Exception):
                    continue  # deleted or retyped since SCAN
                enveloped = bool(last) and is_dead_letter(last[0][1], prefix)
                found.append(DlqInfo(key, int(length), enveloped))
    return sorted(found, key=lambda d: d.key)


# -- reading -------------------------------------------------------------------------------------


def iter_entries(
    conn: Connection,
    dlq: bytes,
    filters: DlqFilter = DlqFilter(),
    *,
    limit: int | None = None,
    newest_first: bool = False,
    prefix: str = "_",
    page: int = PAGE,
    check: bool = True,
) -> Iterator[DlqEntry]:
    """The DLQ's entries matching ``filters``, in id order (or newest first), streamed in
    pages of ``page`` entries."""
    if check:
        require_dlq(conn, dlq)
    if limit is not None and limit <= 0:
        return
    raw = conn.raw(dlq)
    lo, hi = filters.start, filters.end
    shown = 0
    while True:
        with redis_errors("dlq"):
            if newest_first:
                rows = raw.execute_command("XREVRANGE", dlq, hi, lo, "COUNT", page)
            else:
                rows = raw.execute_command("XRANGE", dlq, lo, hi, "COUNT", page)
        for entry_id, flat in rows:
            e = parse_entry(entry_id, flat, prefix, dlq)
            if filters.matches(e):
                yield e
                shown += 1
                if limit is not None and shown >= limit:
                    return
        if len(rows) < page:
            return
        last = rows[-1][0]
        if newest_first:
            hi = b"(" + last
        else:
            lo = b"(" + last


def get_entry(conn: Connection, dlq: bytes, entry_id: bytes, prefix: str = "_") -> DlqEntry:
    require_dlq(conn, dlq)
    (eid,) = normalize_ids([entry_id])
    with redis_errors("dlq show"):
        rows = conn.raw(dlq).execute_command("XRANGE", dlq, eid, eid)
    if not rows:
        raise NotFound(f"entry {escape(eid)} not found in {escape(dlq)}",
                       hint=f"list it: pelctl dlq list {escape(dlq)}")  # fmt: skip
    return parse_entry(rows[0][0], rows[0][1], prefix, dlq)


def read_ids(
    conn: Connection, dlq: bytes, ids: Sequence[bytes], prefix: str = "_"
) -> tuple[list[DlqEntry], list[bytes]]:
    """(found entries, ids not in the DLQ), pipelined."""
    raw = conn.raw(dlq)
    found: list[DlqEntry] = []
    missing: list[bytes] = []
    with redis_errors("dlq"):
        for start in range(0, len(ids), 2_000):
            chunk = ids[start : start + 2_000]
            pipe = raw.pipeline(transaction=False)
            for entry_id in chunk:
                pipe.execute_command("XRANGE", dlq, entry_id, entry_id)
            for entry_id, rows in zip(chunk, pipe.execute(), strict=True):
                if rows:
                    found.append(parse_entry(rows[0][0], rows[0][1], prefix, dlq))
                else:
                    missing.append(entry_id)
    return found, missing


# -- stats ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DlqStats:
    total: int
    by_source: tuple[tuple[bytes | None, int], ...]  # most first
    by_reason: tuple[tuple[str | None, int], ...]
    by_hour: tuple[tuple[int, int], ...]  # (hour start ms, count), in time order
    by_dlq: tuple[tuple[bytes, int], ...]
    oldest_ms: int | None
    newest_ms: int | None
    now_ms: int = field(default_factory=lambda: int(time.time() * 1000))


def hour_of(ms: int) -> int:
    return ms - ms % 3_600_000


def stats(
    conn: Connection,
    dlqs: Sequence[bytes],
    filters: DlqFilter = DlqFilter(),
    *,
    prefix: str = "_",
) -> DlqStats:
    """Counts by source, reason, hour (of ``_dlq_at``) and DLQ: one streamed pass."""
    for key in dlqs:
        require_dlq(conn, key)
    by_source: Counter[bytes | None] = Counter()
    by_reason: Counter[str | None] = Counter()
    by_hour: Counter[int] = Counter()
    by_dlq: Counter[bytes] = Counter()
    oldest = newest = None
    total = 0
    for key in dlqs:
        by_dlq[key] += 0
        for e in iter_entries(conn, key, filters, prefix=prefix, check=False):
            total += 1
            by_source[e.source] += 1
            by_reason[e.reason] += 1
            t = e.time_ms
            by_hour[hour_of(t)] += 1
            by_dlq[key] += 1
            oldest = t if oldest is None else min(oldest, t)
            newest = t if newest is None else max(newest, t)

    def ranked(c: Counter[Any]) -> tuple[tuple[Any, int], ...]:
        return tuple(sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))

    return DlqStats(
        total=total,
        by_source=ranked(by_source),
        by_reason=ranked(by_reason),
        by_hour=tuple(sorted(by_hour.items())),
        by_dlq=tuple(sorted(by_dlq.items())),
        oldest_ms=oldest,
        newest_ms=newest,
    )


# -- replay: fields, markers ---------------------------------------------------------------------


def marker_field(prefix: str = "_") -> bytes:
    return prefix.encode() + b"replayed_from"


def replay_fields(
    raw: Iterable[tuple[bytes, bytes]],
    prefix: str = "_",
    *,
    keep_envelope: bool = False,
    keep_retries: bool = False,
    no_lineage: bool = False,
) -> list[bytes]:
    """The fields a replayed copy gets (the marker field is added by the script).

    Original fields in order; the envelope (``<prefix>dlq_*``) dropped unless
    ``keep_envelope``; ``<prefix>retry_count`` dropped (the count restarts) unless
    ``keep_retries``; a ``<prefix>replayed_from`` of an earlier replay always dropped; then
    the lineage (:func:`pelctl.core.lineage.replay_copy`): ``<prefix>prior_deliveries`` and
    ``<prefix>original_id``.

    ``no_lineage``: the original fields exactly as they were before the move (only the
    envelope dropped): nothing removed, nothing added.
    """
    p = prefix.encode()
    names = envelope_names(prefix)
    pairs = list(raw)
    if no_lineage:
        return lineage.replay_copy(pairs, {}, prefix, drop=set(names), lineage=False)
    drop = {marker_field(prefix)}
    if not keep_envelope:
        drop.update(names)
    if not keep_retries:
        drop.add(p + b"retry_count")
    env = {names[k]: v for k, v in pairs if k in names}  # the last value of each
    return lineage.replay_copy(pairs, env, prefix, drop=drop)


def fields_digest(fields: Sequence[bytes]) -> str:
    """SHA1 (hex) of ``fields``, each prefixed by its length (``3:abc,0:,...``): how
    ``replay_mark.lua`` recognises a copy that carries no marker field."""
    h = hashlib.sha1(usedforsecurity=False)
    for n, f in enumerate(fields):
        h.update(b"%s%d:" % (b"," if n else b"", len(f)))
        h.update(f)
    return h.hexdigest()


_TAG_SEARCH: dict[int, bytes] = {}


def _slot_tag(slot: int) -> bytes:
    """A short hash tag whose slot is ``slot`` (found once by search, then cached)."""
    if slot not in _TAG_SEARCH:
        n = 0
        while key_slot(b"pelctl-%d" % n) != slot:
            n += 1
        _TAG_SEARCH[slot] = b"pelctl-%d" % n
    return _TAG_SEARCH[slot]


def marker_key(target: bytes, dlq: bytes) -> bytes:
    """The sorted set of DLQ ids already copied into ``target`` from ``dlq`` (cross-slot
    replay). It shares ``target``'s cluster slot: ``{orders}:pelctl-replayed:orders:dlq``."""
    tag = hash_tag(target)
    if tag == target and (b"}" in target or b"{" in target or not target):
        tag = _slot_tag(key_slot(target))  # a name whose own braces would not form the tag
    key = b"{" + tag + b"}:pelctl-replayed:" + dlq
    assert key_slot(key) == key_slot(target)
    return key


def force_cross_slot_default() -> bool:
    return os.environ.get(FORCE_CROSS_SLOT_ENV, "").lower() in ("1", "true", "yes", "on")


def cross_slot(conn: Connection, dlq: bytes, target: bytes, force: bool | None = None) -> bool:
    if force is None:
        force = force_cross_slot_default()
    return bool(force) or (conn.is_cluster and not same_slot(dlq, target))


# -- the mutation declarations -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DlqTargets(Targets):
    """Which DLQ entries: explicit ids (``Targets.ids``), or filters; ``limit`` caps them;
    ``every`` (``--all``) is what ``purge`` needs to take a whole DLQ."""

    source: bytes | None = None
    reason: str | None = None
    start: bytes = b"-"  # --since (an id bound)
    end: bytes = b"+"  # --until / --older-than
    # The DLQ was found by discovery, not named: replay only entries of its own stream
    # (``X`` for ``X:dlq``); the others are refused ("name the DLQ to replay it").
    discovered: bool = False

    @property
    def filter(self) -> DlqFilter:
        return DlqFilter(self.source, self.reason, self.start, self.end)


@dataclass(frozen=True, slots=True)
class ReplayOptions(Options):
    """``to`` (inherited) is the target stream instead of each entry's ``_dlq_source``."""

    rate: float | None = None  # entries per second; None: as fast as possible
    keep_envelope: bool = False
    keep_retries: bool = False

    def check(self) -> None:
        """Options that contradict each other (exit 2)."""
        if self.no_lineage and self.keep_envelope:
            raise UsageError(
                "--keep-envelope adds the _dlq_* fields to the copy: not with --no-lineage",
                hint="--no-lineage replays the original fields alone (the envelope stripped)",
            )


def dlq_filter(targets: Targets) -> DlqFilter:
    if isinstance(targets, DlqTargets):
        return targets.filter
    return DlqFilter()


def require_targets(action: str, targets: Targets, *, named: bool) -> None:
    """Like every repair, a DLQ mutation never takes everything by accident (exit 2).
    ``dlq-replay`` needs a DLQ (``named``: given, or chosen with ``--match``), entry ids, a
    filter or ``--all``; ``dlq-purge`` deletes for good, so naming the DLQ is not enough:
    ids, a filter or ``--all``."""
    if targets.ids or dlq_filter(targets).active or targets.every:
        return
    if action == "dlq-replay":
        if named:
            return
        raise UsageError(
            "no dead-letter entries targeted: replay needs a DLQ, a filter or --all",
            hint="name the DLQ (pelctl dlq replay orders:dlq), filter (--source, --reason, "
            "--since, --until, --id), or --all for every *:dlq stream",
        )
    raise UsageError(
        "no entries targeted: purge deletes for good",
        hint="give --id, a filter (--older-than, --source, --reason, --since, --until) "
        "or --all for the whole dead-letter stream",
    )


class DlqMutation(Mutation):
    """A mutation of a dead-letter stream: the plan's ``stream`` is the DLQ, no group."""

    def describe(self, plan: Plan, items: Iterable[PlanItem], n: int, *, dead: int = 0) -> str:
        """``14 entries from orders:dlq to orders`` (replay: where each entry goes)."""
        del dead
        text = f"{n:,} {self.noun(n)} from {escape(plan.stream)}"
        if self.name == "dlq-replay":
            targets = [i.owner for i in items if i.owner]
            if targets:
                text += f" to {name_list(targets)}"
        return text


def combined_prompt(plans: Sequence[Plan], context: str | None = None) -> str:
    """The one question for several dead-letter streams: each one named with its count."""
    first = plans[0]
    total = sum(p.count for p in plans)
    each = ", ".join(f"{escape(p.stream)} ({p.count:,})" for p in plans[:5])
    if len(plans) > 5:
        each += f" and {len(plans) - 5:,} more"
    where = on_server(first.server, context)
    noun = "entry" if total == 1 else "entries"
    return f"{first.mutation.verb} {total:,} {noun} from {len(plans)} DLQs: {each}{where}?"


# Outcomes of replay/purge that changed something. ``mutations.APPLIED_OUTCOMES`` does not
# list them (it belongs to the repairs), so their item results say so themselves.
DLQ_APPLIED = frozenset({"replayed", "already-replayed", "purged"})


@dataclass(frozen=True, slots=True)
class DlqItemResult(ItemResult):
    """Item results of replay/purge: their outcomes count as applied."""

    @property
    def status(self) -> str:
        return APPLIED if self.outcome in DLQ_APPLIED else status_of(self.outcome)


def _stamp(conn: Connection, dlq: bytes) -> dict[str, object]:
    from pelctl.core.repair import identity, server_db

    run_id, added = identity(conn, dlq)
    return {
        "server": conn.settings.redacted_url,
        "context": conn.settings.context,
        "server_id": run_id,
        "db": server_db(conn, dlq),
        "stream_added": added,
        "created_ms": int(time.time() * 1000),
    }


def _select(
    conn: Connection, dlq: bytes, targets: Targets, prefix: str
) -> tuple[Iterable[DlqEntry], tuple[bytes, ...]]:
    f = dlq_filter(targets)
    if targets.ids:
        if f.active:
            raise UsageError("give entry ids or filters, not both",
                             hint="filters: --source, --reason, --since, --until")  # fmt: skip
        found, missing = read_ids(conn, dlq, normalize_ids(targets.ids), prefix)
        return found, tuple(missing)
    return iter_entries(conn, dlq, f, limit=targets.limit, prefix=prefix, check=False), ()


def _key_types(conn: Connection, keys: Iterable[bytes]) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    with redis_errors("dlq replay"):
        for key in keys:
            out[key] = conn.raw(key).execute_command("TYPE", key)
    return out


def plan_replay(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """Planner of ``dlq-replay``: ``stream`` is the DLQ; each item's ``owner`` is where the
    entry goes (``--to``, else its ``_dlq_source``), ``idle_ms`` its age in the DLQ and
    ``deliveries`` its ``_dlq_deliveries``. For a DLQ found by discovery
    (``targets.discovered``), an entry whose ``_dlq_source`` is not the stream the DLQ's
    name belongs to is refused: whoever can write into ``tenantB:x:dlq`` must not be able to
    make pelctl write into ``payments``."""
    del group, detail
    dlq = stream
    require_targets("dlq-replay", targets, named=not getattr(targets, "discovered", False))
    to = options.to
    if to is not None and to == dlq:
        raise UsageError("--to is the dead-letter stream itself")
    if isinstance(options, ReplayOptions):
        options.check()
    require_dlq(conn, dlq)
    prefix = options.field_prefix
    entries, missing = _select(conn, dlq, targets, prefix)
    now = int(time.time() * 1000)
    rows: list[tuple[DlqEntry, bytes | None]] = [(e, to or e.source) for e in entries]
    own = dlq_source_of(dlq) if getattr(targets, "discovered", False) else None
    if own is not None:  # discovered: entries of other streams are refused, not replayed
        rows = [(e, None if e.source != own else t) for e, t in rows]
    kinds = _key_types(conn, {t for _e, t in rows if t is not None})
    items: list[PlanItem] = []
    cross: set[bytes] = set()
    for e, target in rows:
        action, note = "replay", ""
        if own is not None and e.source != own:
            action = "refuse"
            source = "no _dlq_source" if e.source is None else f"_dlq_source {escape(e.source)}"
            note = (f"{source}, not {escape(own)} (the stream {escape(dlq)} belongs to): "
                    f"name the DLQ to replay it")  # fmt: skip
        elif target is None:
            action, note = "refuse", "no _dlq_source in the entry: give --to STREAM"
        elif target == dlq:
            action, note = "refuse", "its source is this dead-letter stream"
        elif kinds[target] not in (b"stream", b"none"):
            kind = kinds[target].decode(errors="replace")
            action, note = "refuse", f"target {escape(target)} is a {kind}, not a stream"
        elif kinds[target] == b"none" and to is None:
            action = "refuse"
            note = f"source stream {escape(target)} does not exist (--to STREAM creates it)"
        elif kinds[target] == b"none":
            note = f"creates {escape(target)}"
        if action == "replay" and target is not None and cross_slot(conn, dlq, target):
            cross.add(target)
        age = max(0, now - e.time_ms)
        items.append(PlanItem(e.id, target or b"", age, e.total_deliveries or 0, action,
                              note or (e.reason or "")))  # fmt: skip
    notes: list[str] = []
    if options.no_lineage:
        notes.append(lineage.no_lineage_note("replay", options.field_prefix))
    if cross:
        names = ", ".join(escape(t) for t in sorted(cross)[:3])
        notes.append(
            f"{escape(dlq)} and {names} are in different cluster slots: ordered path (copy "
            "with a replay marker first, then delete from the DLQ); a rerun after a crash "
            "skips what was already copied"
        )
    return Plan(
        action=mutation.name,
        stream=dlq,
        group=b"",
        items=tuple(items),
        targets=targets,
        options=options,
        missing=missing,
        notes=tuple(notes),
        **_stamp(conn, dlq),  # type: ignore[arg-type]
    )


def plan_purge(
    conn: Connection,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """Planner of ``dlq-purge``: needs ids, a filter, or ``every`` (``--all``)."""
    del group, detail
    dlq = stream
    require_targets("dlq-purge", targets, named=True)
    require_dlq(conn, dlq)
    entries, missing = _select(conn, dlq, targets, options.field_prefix)
    now = int(time.time() * 1000)
    items = tuple(
        PlanItem(
            e.id,
            e.source or b"",
            max(0, now - e.time_ms),
            e.total_deliveries or 0,
            "purge",
            e.reason or "",
        )  # fmt: skip
        for e in entries
    )
    return Plan(action=mutation.name, stream=dlq, group=b"", items=items, targets=targets,
                options=options, missing=missing, **_stamp(conn, dlq))  # type: ignore[arg-type]  # fmt: skip


# -- executing -----------------------------------------------------------------------------------


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up. ``take(n)`` sleeps as needed."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self.tokens = self.burst
        self.last = time.monotonic()

    def take(self, n: int) -> None:
        while True:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if self.tokens >= n:
                self.tokens -= n
                return
            time.sleep((n - self.tokens) / self.rate)


def batch_for_rate(rate: float | None, batch_size: int | None) -> int:
    """Entries per script call: the default, or ~1/20 s worth of entries when rate-limited
    (small batches keep the pace even)."""
    size = batch_size or DEFAULT_BATCH
    if rate is None:
        return size
    return max(1, min(size, int(rate / 20)))


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return "" if value is None else str(value)


def _start(plan: Plan) -> tuple[list[ItemResult], list[PlanItem]]:
    results: list[ItemResult] = [DlqItemResult(i, "gone") for i in plan.missing]
    send: list[PlanItem] = []
    for item in plan.items:
        if item.action == "skip":
            results.append(DlqItemResult(item.id, item.note or "skip"))
        elif item.action == "refuse":
            results.append(DlqItemResult(item.id, "refused", item.note))
        else:
            send.append(item)
    return results, send


class _Replayer:
    """Replays rounds of batches; see the module docstring for the paths."""

    def __init__(self, conn: Connection, plan: Plan, force: bool | None) -> None:
        opts = plan.options
        self.conn = conn
        self.dlq = plan.stream
        self.prefix = opts.field_prefix
        self.keep_envelope = bool(getattr(opts, "keep_envelope", False))
        self.keep_retries = bool(getattr(opts, "keep_retries", False))
        self.no_lineage = opts.no_lineage
        self.create = opts.to is not None  # only an explicit --to may create the target
        # The replay marker field: none without lineage (the scripts then add nothing).
        self.marker = b"" if self.no_lineage else marker_field(self.prefix)
        self.force = force
        self.dlq_client = conn.raw(self.dlq)
        self.same = script("dlq_replay")
        self.add = script("dlq_replay_add")
        self.mark = script("replay_mark")
        self.wide: dict[bytes, int] = {}  # id -> XADD values, of the entries too wide
        self.read_bytes = 0  # payload read so far, and in how many entries: how many
        self.read_entries = 0  # entries one read may hold within ROUND_BYTES

    def xadd_values(self, fields: Sequence[bytes]) -> int:
        """Arguments of the copy's XADD: key, [NOMKSTREAM], *, fields, the marker pair."""
        return 2 + (0 if self.create else 1) + len(fields) + (2 if self.marker else 0)

    def run(self, chunks: Sequence[Sequence[PlanItem]]) -> list[ItemResult]:
        """Replay one round: ``chunks`` are the batches (one script call each, or more when
        they carry many bytes), read in one pipeline and sent in one round trip, unless
        their entries are big: then a few chunks at a time, so the client holds about
        ROUND_BYTES of payload (entries of 1 MiB would otherwise be 1.6 GB a round).
        Connection errors propagate (the outcome of this round is unknown)."""
        out: list[ItemResult] = []
        rest = list(chunks)
        while rest:
            n = self._chunks_per_read(rest)
            out += self._round(rest[:n])
            rest = rest[n:]
        return out

    def _chunks_per_read(self, chunks: Sequence[Sequence[PlanItem]]) -> int:
        if not self.read_entries:
            return 1  # nothing known yet: the first chunk tells the entries' size
        per_entry = self.read_bytes / self.read_entries
        n, total = 0, 0.0
        for chunk in chunks:
            total += len(chunk) * per_entry
            if n and total > ROUND_BYTES:
                break
            n += 1
        return n

    def _round(self, chunks: Sequence[Sequence[PlanItem]]) -> list[ItemResult]:
        out: list[ItemResult] = []
        ids = [item.id for chunk in chunks for item in chunk]
        with redis_errors("dlq replay"):
            pipe = self.dlq_client.pipeline(transaction=False)
            for entry_id in ids:
                pipe.execute_command("XRANGE", self.dlq, entry_id, entry_id)
            rows = pipe.execute()
        by_id = {eid: row[0][1] for eid, row in zip(ids, rows, strict=True) if row}
        self.read_entries += len(by_id)
        self.read_bytes += sum(len(x) for flat in by_id.values() for x in flat)
        out += [DlqItemResult(i, "gone", _SKIP_TEXT["gone"]) for i in ids if i not in by_id]
        same_calls: list[tuple[list[PlanItem], Call]] = []
        cross: dict[bytes, list[tuple[PlanItem, list[bytes]]]] = {}
        wide: list[tuple[PlanItem, list[bytes]]] = []
        for chunk in chunks:
            same: list[tuple[PlanItem, list[bytes]]] = []
            for item in chunk:
                flat = by_id.get(item.id)
                if flat is None:
                    continue
                pairs = field_pairs(flat)
                fields = replay_fields(pairs, self.prefix, keep_envelope=self.keep_envelope,
                                       keep_retries=self.keep_retries,
                                       no_lineage=self.no_lineage)  # fmt: skip
                values = self.xadd_values(fields)
                if not xadd_fits(values):
                    self.wide[item.id] = values
                    wide.append((item, fields))
                elif cross_slot(self.conn, self.dlq, item.owner, self.force):
                    cross.setdefault(item.owner, []).append((item, fields))
                else:
                    same.append((item, fields))
            for part in _by_bytes(same, CALL_BYTES):
                same_calls.append(([i for i, _f in part], self._same_call(part)))
        for trip in _by_bytes(same_calls, ROUND_BYTES, lambda c: _call_bytes(c[1])):
            with redis_errors("dlq replay"):
                replies = round_trip(self.dlq_client, [c for _i, c in trip])
            for (items, _call), reply in zip(trip, replies, strict=True):
                out += _parse(items, reply)
        for target, rows in cross.items():
            out += self._cross_slot(target, rows, max(len(c) for c in chunks))
        for item, fields in wide:
            out.append(self._wide(item, fields))
        return out

    def _same_call(self, rows: list[tuple[PlanItem, list[bytes]]]) -> Call:
        keys: list[bytes] = [self.dlq]
        index: dict[bytes, tuple[int, int]] = {}
        args: list[object] = [self.marker]
        for item, fields in rows:
            if item.owner not in index:
                keys += [item.owner, marker_key(item.owner, self.dlq)]
                index[item.owner] = (len(keys) - 1, len(keys))
            t, m = index[item.owner]
            args += [item.id, t, m, 1 if self.create else 0, len(fields), *fields]
        return Call(self.same, tuple(keys), tuple(args))

    def _cross_slot(
        self, target: bytes, rows: list[tuple[PlanItem, list[bytes]]], batch: int
    ) -> list[ItemResult]:
        """Step 2 on the target's slot (copies + markers), then step 3: XDEL from the DLQ."""
        keys = (target, marker_key(target, self.dlq))
        header: list[object] = [self.marker, 1 if self.create else 0, MARKER_RETENTION_MS]
        calls: list[tuple[list[PlanItem], Call]] = []
        for start in range(0, len(rows), batch):
            for part in _by_bytes(rows[start : start + batch], CALL_BYTES):
                args = list(header)
                for item, fields in part:
                    args += [item.id, len(fields), *fields]
                calls.append(([i for i, _f in part], Call(self.add, keys, tuple(args))))
        results: list[ItemResult] = []
        for trip in _by_bytes(calls, ROUND_BYTES, lambda c: _call_bytes(c[1])):
            with redis_errors("dlq replay"):
                replies = round_trip(self.conn.raw(target), [c for _i, c in trip])
            for (items, _call), reply in zip(trip, replies, strict=True):
                results += _parse(items, reply)
        done = [r.id for r in results if r.outcome in ("replayed", "already-replayed")]
        if done:
            # Step 3: every copy (and its marker) exists; only now leave the DLQ.
            with redis_errors("dlq replay"):
                self.dlq_client.execute_command("XDEL", self.dlq, *done)
        return results

    def _wide(self, item: PlanItem, fields: list[bytes]) -> ItemResult:
        """One entry too wide for a script: the marker path, with the client's own XADD.

        On the target's node, on one connection: WATCH the marker set; if the marker is there
        the entry was copied before ('already'); else MULTI (alone: were it refused, the
        commands after it would run outside any transaction), then the XADD of the copy and
        ``replay_mark.lua`` (records the marker only if the XADD wrote the copy), EXEC: the
        copy and its marker are atomic. Then XDEL from the DLQ. A crash before the XDEL
        leaves the copy and its marker: the rerun only deletes (as ``dlq_replay_add.lua``).
        The WATCH stops two runs copying the same entry at the same moment: EXEC fails for
        the later one, which looks again and finds the marker. A copy without a marker
        field (``--no-lineage``) is recognised by its fields instead (``replay_mark.lua``).
        """
        from pelctl.core.repair import wide_note

        target, note = item.owner, wide_note(self.wide[item.id])
        client = self.conn.raw(target)
        markers = marker_key(target, self.dlq)
        marker_pair = (self.marker, item.id) if self.marker else ()
        xadd: list[object] = ["XADD", target, *(() if self.create else ("NOMKSTREAM",)), "*",
                              *fields, *marker_pair]  # fmt: skip
        mark_args: tuple[object, ...] = (self.marker, item.id, MARKER_RETENTION_MS)
        # Without a marker field the script knows the copy by its fields, and by being newer
        # than the target's newest entry read after the WATCH (appended there).
        known = (len(fields), fields_digest(fields)) if not self.marker else None
        with redis_errors("dlq replay"):
            # The script must work inside MULTI, where a NOSCRIPT or an ACL refusal could no
            # longer stop the XADD: load it, and let it try its commands first ('check').
            self.mark.load(client)
            check = self.mark.call(client, [target, markers], ["check", *mark_args])
            if _text(check[0]) == "denied":  # type: ignore[index]
                raise rex.NoPermissionError(_text(check[1]))  # type: ignore[index]
            for _attempt in range(WATCH_ATTEMPTS):
                reply = _watched_copy(client, markers, item.id, xadd,
                                      ("EVALSHA", self.mark.sha, 2, target, markers, "mark",
                                       *mark_args, *(known or ())),
                                      newest_of=target if known else None)  # fmt: skip
                if reply is not None:
                    break
            else:
                return DlqItemResult(item.id, "fail", "the marker set kept changing (another "
                                     "replay of the same entries?); rerun", note)  # fmt: skip
            if reply == "already":
                self.dlq_client.execute_command("XDEL", self.dlq, item.id)
                return DlqItemResult(item.id, "already-replayed", _SKIP_TEXT["already"], note)
            added, marked = reply
            if isinstance(added, Exception):
                return DlqItemResult(item.id, "fail", f"copy not written: {added}", note)
            if isinstance(marked, Exception) or _text(marked[0]) != "replayed":  # type: ignore[index]
                if added is None:
                    return DlqItemResult(item.id, "no-target", _SKIP_TEXT["no-target"], note)
                # The copy is written but its marker is not (cannot happen: the script's
                # commands were checked): the dead letter stays; a rerun copies it again.
                text = f"copied as {_text(added)} but not marked ({marked}): dead letter kept"
                return DlqItemResult(item.id, "fail", text, note)
            self.dlq_client.execute_command("XDEL", self.dlq, item.id)
        return DlqItemResult(item.id, "replayed", _text(marked[1]), note)  # type: ignore[index]


def _watched_copy(
    client: Any,  # noqa: ANN401
    markers: bytes,
    dlq_id: bytes,
    xadd: Sequence[object],
    mark: Sequence[object],
    newest_of: bytes | None = None,
) -> object:
    """WATCH markers; 'already' if ``dlq_id`` is marked; else MULTI / XADD / mark / EXEC:
    the two replies, or None when EXEC failed because the marker set changed. With
    ``newest_of`` (a copy without a marker field) the id of that stream's newest entry, read
    after the WATCH ('' when none), is appended to ``mark``. On one pooled connection; on
    any error it is dropped (with whatever WATCH or MULTI it was in)."""
    pool = client.connection_pool
    c = pool.get_connection()

    def cmd(*args: object) -> object:
        c.send_command(*args)
        return c.read_response()  # an error reply raises

    try:
        cmd("WATCH", markers)
        if cmd("ZSCORE", markers, dlq_id) is not None:
            cmd("MULTI")
            cmd("EXEC")  # an empty transaction ends the WATCH
            return "already"
        if newest_of is not None:
            try:
                newest = cmd("XREVRANGE", newest_of, "+", "-", "COUNT", 1)
            except rex.ResponseError:  # not a stream: the XADD fails alike, nothing written
                newest = None
            mark = [*mark, newest[0][0] if newest else b""]  # type: ignore[index]
        cmd("MULTI")  # refused (ACL): raises here, before anything is queued
        c.send_packed_command(c.pack_commands([xadd, mark, ("EXEC",)]))
        c.read_response()  # QUEUED
        c.read_response()  # QUEUED
        try:
            return c.read_response()  # [XADD reply, mark reply], or None (WATCH)
        except rex.ExecAbortError as err:  # nothing ran; an ACL refusal of EXEC says so
            if "NOPERM" in str(err):
                raise rex.NoPermissionError(str(err)) from err
            raise
    except BaseException:
        c.disconnect()
        raise
    finally:
        pool.release(c)


def _call_bytes(call: Call) -> int:
    return sum(len(a) if isinstance(a, bytes) else 8 for a in call.args)


def _by_bytes(rows: Sequence[Any], limit: int, size: Callable[[Any], int] | None = None
              ) -> Iterator[list[Any]]:  # fmt: skip
    """``rows`` cut into runs of at most ``limit`` bytes (at least one row each). A row is
    ``(item, fields)`` unless ``size`` says how to measure it."""
    measure = size or (lambda row: sum(len(f) for f in row[1]))
    part: list[Any] = []
    total = 0
    for row in rows:
        n = measure(row)
        if part and total + n > limit:
            yield part
            part, total = [], 0
        part.append(row)
        total += n
    if part:
        yield part


def _parse(items: Sequence[PlanItem], reply: object) -> list[ItemResult]:
    if isinstance(reply, Exception):  # this call failed on the server: nothing of it ran
        from pelctl.core.repair import fatal

        fatal(reply)  # an ACL refusal is the whole command's failure (exit 4)
        return [DlqItemResult(item.id, "fail", f"script error: {reply}") for item in items]
    flat = list(reply)  # type: ignore[call-overload]
    out: list[ItemResult] = []
    for n, item in enumerate(items):
        status, detail = _text(flat[2 * n]), _text(flat[2 * n + 1])
        if status == "replayed":
            out.append(DlqItemResult(item.id, "replayed", detail))
        elif status == "wide":  # the client sends only entries that fit: not expected
            out.append(DlqItemResult(item.id, "fail", f"too wide for a script ({detail} XADD "
                                     "values): nothing written"))  # fmt: skip
        elif status == "already":
            out.append(DlqItemResult(item.id, "already-replayed", _SKIP_TEXT["already"]))
        elif status == "skip":
            out.append(DlqItemResult(item.id, detail, _SKIP_TEXT.get(detail, "")))
        else:
            out.append(DlqItemResult(item.id, "fail", detail))
    return out


_SKIP_TEXT = {
    "gone": "no longer in the dead-letter stream",
    "no-target": "the target stream does not exist (any more)",
    "already": "copied by an earlier run; now removed from the DLQ",
}

Round = Callable[[Sequence[Sequence[PlanItem]]], list[ItemResult]]


def _run_batches(
    send: Sequence[PlanItem],
    one: Round,
    *,
    batch: int,
    depth: int,
    rate: float | None,
    progress: Progress | None,
) -> tuple[list[ItemResult], bool]:
    """Rounds of ``depth`` batches of ``batch`` items; under ``rate`` a token bucket paces
    each round. A connection lost mid-round: its items are "unknown", the rest not
    attempted. Ctrl-C: the rest "interrupted"."""
    out: list[ItemResult] = []
    # Room for two rounds: time overslept waiting for one round is not lost for the next.
    bucket = TokenBucket(rate, 2 * batch * depth) if rate else None
    size = batch * depth
    i = 0
    try:
        while i < len(send):
            part = send[i : i + size]
            if bucket is not None:
                bucket.take(len(part))
            try:
                out += one([part[j : j + batch] for j in range(0, len(part), batch)])
            except Exception as err:  # noqa: BLE001 - reported per item
                if not _is_connection_error(err):
                    raise
                out += [DlqItemResult(it.id, "unknown", f"connection lost: {err}") for it in part]
                out += [DlqItemResult(it.id, "fail", "not attempted: connection lost")
                        for it in send[i + size :]]  # fmt: skip
                return out, False
            i += len(part)
            if progress:
                progress(i, len(send))
    except KeyboardInterrupt:
        answered = {r.id for r in out}
        out += [DlqItemResult(it.id, "interrupted", "outcome unknown or not attempted")
                for it in send[i:] if it.id not in answered]  # fmt: skip
        return out, True
    return out, False


def _is_connection_error(err: BaseException) -> bool:
    from pelctl.base.errors import ConnectionFailed

    cause = err.__cause__ or err
    return isinstance(err, ConnectionFailed) or isinstance(
        cause, (rex.ConnectionError, rex.TimeoutError, OSError)
    )


def apply_replay(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    force_cross_slot: bool | None = None,
    batch_size: int | None = None,
) -> RepairResult:
    """Executor of ``dlq-replay``: rounds of pipelined script calls; under ``--rate`` one
    small batch per round, paced by a token bucket.

    ``force_cross_slot`` (tests) takes the ordered three-step path even when one script
    could do it (default: env ``PELCTL_FORCE_CROSS_SLOT=1``)."""
    rate = getattr(plan.options, "rate", None)
    results, send = _start(plan)
    replayer = _Replayer(conn, plan, force_cross_slot)
    done, interrupted = _run_batches(
        send, replayer.run, batch=batch_for_rate(rate, batch_size),
        depth=1 if rate else DEFAULT_DEPTH, rate=rate, progress=progress,
    )  # fmt: skip
    notes = []
    if any(r.outcome == "unknown" for r in done):
        notes.append("the connection was lost: rerun the same replay, it skips what was done")
    return build_result(plan, results + done, interrupted=interrupted, notes=notes)


def apply_purge(
    conn: Connection,
    plan: Plan,
    *,
    progress: Progress | None = None,
    batch_size: int | None = None,
    **_: object,
) -> RepairResult:
    """Executor of ``dlq-purge``: XDEL per id (pipelined), each answered purged or gone."""
    results, send = _start(plan)
    client = conn.raw(plan.stream)

    def one(chunks: Sequence[Sequence[PlanItem]]) -> list[ItemResult]:
        items = [it for chunk in chunks for it in chunk]
        with redis_errors("dlq purge"):
            pipe = client.pipeline(transaction=False)
            for item in items:
                pipe.execute_command("XDEL", plan.stream, item.id)
            replies = pipe.execute()
        return [DlqItemResult(it.id, "purged") if int(n) else
                DlqItemResult(it.id, "gone", _SKIP_TEXT["gone"])
                for it, n in zip(items, replies, strict=True)]  # fmt: skip

    done, interrupted = _run_batches(send, one, batch=batch_size or 1_000, depth=1, rate=None,
                                     progress=progress)  # fmt: skip
    return build_result(plan, results + done, interrupted=interrupted)


REPLAY = declare(
    DlqMutation(
        "dlq-replay",
        "replay",
        "put dead-lettered entries back on their source stream (or --to), exactly once",
        plan_replay,
        apply_replay,
        past="replayed",
    )  # fmt: skip
)
PURGE = declare(
    DlqMutation(
        "dlq-purge",
        "permanently delete",
        "delete entries from the dead-letter stream for good (XDEL)",
        plan_purge,
        apply_purge,
        past="permanently deleted",
    )  # fmt: skip
)


# -- the API every surface calls -----------------------------------------------------------------


def plan_dlq(
    conn: Connection,
    action: str,
    dlq: bytes,
    targets: Targets = DlqTargets(),
    options: Options = ReplayOptions(),
    *,
    detail: bool = False,
) -> Plan:
    """``mutations.plan`` for a DLQ (no group): ``action`` is ``dlq-replay`` or ``dlq-purge``."""
    if get(action) not in (REPLAY, PURGE):
        raise UsageError(f"{action} is not a dead-letter mutation")
    return plan_mutation(conn, action, dlq, b"", targets, options, detail=detail)


def params(plan: Plan) -> dict[str, Any]:
    """The plan's targets and options for the audit line (DLQ filters and replay options
    included, which :func:`pelctl.core.plan.params_json` does not know)."""
    from pelctl.core.plan import params_json

    out = params_json(plan)
    t, o = plan.targets, plan.options
    if isinstance(t, DlqTargets):
        out["targets"].update({
            "source": escape(t.source) if t.source is not None else None,
            "reason": t.reason,
            "since": t.start.decode() if t.start != b"-" else None,
            "until": t.end.decode() if t.end != b"+" else None,
            "discovered": t.discovered,
        })  # fmt: skip
    if isinstance(o, ReplayOptions):
        out["options"].update({"rate": o.rate, "keep_envelope": o.keep_envelope,
                               "keep_retries": o.keep_retries})  # fmt: skip
    out["options"]["no_lineage"] = o.no_lineage
    return out


__all__ = [
    "PURGE",
    "REPLAY",
    "DlqEntry",
    "DlqFilter",
    "DlqInfo",
    "DlqStats",
    "DlqTargets",
    "ReplayOptions",
    "discover",
    "dlq_source_of",
    "get_entry",
    "is_dlq_name",
    "iter_entries",
    "marker_key",
    "params",
    "parse_rate",
    "parse_time_bound",
    "plan_dlq",
    "replay_fields",
    "require_dlq",
    "require_targets",
    "stats",
]
