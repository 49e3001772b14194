"""``pelctl inspect``: one stream, its groups, consumers, PEL summary and advice."""

from __future__ import annotations

import itertools
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from operator import itemgetter

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.base.errors import GroupNotFound
from pelctl.core import liveness
from pelctl.core.cmdline import command_line
from pelctl.core.dlq.envelope import default_dlq
from pelctl.core.ghosts import StreamBounds, count_ghosts, stream_bounds
from pelctl.core.liveness.verdict import DEFAULT_DEAD_AFTER_MS, ConsumerFacts
from pelctl.core.models import (
    POISON_DELIVERIES,
    Advice,
    ConsumerInfo,
    GroupInfo,
    IdleCounts,
    PelSummary,
    PendingEntry,
    StreamInspection,
)
from pelctl.core.targets import group_rows
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import rows as reply_rows
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan

# Idle thresholds counted by inspect (> 1m, > 10m, > 1h), from one bounded scan.
IDLE_THRESHOLDS_MS = (60_000, 600_000, 3_600_000)
# Up to this many pending entries inspect reads the whole PEL (so the longest-idle entry is
# known even when nothing is idle over the first threshold); above it, only what the server
# finds idle over the first threshold crosses the wire (XPENDING IDLE windows).
FULL_SCAN_MAX = 10_000
DEFAULT_OLDEST = 5
# Lock-key patterns tried when none is given (no --lock-key, no context lock_key), on a
# bounded sample of the entries inspect already read (each consumer's newest ids, the
# oldest rows): at most LOCK_DETECT_IDS ids a group and LOCK_DETECT_KEYS EXISTS a call, in
# one pipeline, and only for a group whose advice would repair something.
LOCK_PATTERNS = (
    "lock:{stream}:{id}",
    "lock:{{{stream}}}:{id}",  # lock:{orders}:<id>, a cluster hash tag
    "lock:{stream}:{group}:{id}",
    "lock:{id}",
)
LOCK_DETECT_PER_CONSUMER = 4
LOCK_DETECT_IDS = 32
LOCK_DETECT_KEYS = 128
# Dead (or unknown) consumers named one by one in the advice, each with its own command.
ADVICE_CONSUMERS = 5
__all__ = [
    "DEFAULT_DEAD_AFTER_MS",
    "LOCK_PATTERNS",
    "POISON_DELIVERIES",
    "detect_lock_key",
    "inspect_stream",
    "pel_health",
]


@dataclass
class LivenessTally:
    """What the inspect scan learns about each consumer's PEL on the way, for
    :func:`pelctl.core.liveness.judge_group`: how many of its entries were seen, how many of
    those were delivered at least ``dead_after_ms`` ago, and (with a lock pattern) the ids
    of its ``lock_k`` newest entries (a worker's entry in flight is usually its newest).
    C-speed counters; the short walk for lock candidates runs only with a lock pattern."""

    dead_after_ms: int
    lock_k: int = 0
    floor: int | None = None  # the scan's XPENDING IDLE floor (None: the whole PEL)
    seen: Counter[bytes] = field(default_factory=Counter)
    stale: Counter[bytes] = field(default_factory=Counter)
    newest: dict[bytes, list[bytes]] = field(default_factory=dict)
    poison: Counter[bytes] = field(default_factory=Counter)  # per consumer, for the advice

    def add(self, page: list) -> None:  # raw XPENDING rows
        owners = list(map(_owner_of, page))
        self.seen.update(owners)
        self.poison.update(
            compress(owners, map(POISON_DELIVERIES.__le__, map(_deliveries_of, page)))
        )
        if self.floor is not None and self.floor >= self.dead_after_ms:
            self.stale.update(owners)  # every row of an IDLE-floored scan is that old
        else:
            self.stale.update(compress(owners, map(self.dead_after_ms.__le__, map(_idle_of, page))))
        if self.lock_k:
            self._newest(page, set(owners))

    def _newest(self, page: list, owners: set[bytes]) -> None:
        """Pages come in id order: the newest ids of each consumer are at the end of the
        last page it appears in. A short walk back from the end of the page."""
        need = dict.fromkeys(owners, self.lock_k)
        found: dict[bytes, list[bytes]] = {o: [] for o in owners}
        left = self.lock_k * len(owners)
        for row in itertools.islice(reversed(page), left * 8):
            owner = row[1]
            if need[owner]:
                found[owner].append(row[0])
                need[owner] -= 1
                left -= 1
                if not left:
                    break
        for owner, ids in found.items():
            if ids:
                self.newest[owner] = ids

    def fresh(self, name: bytes, pending: int) -> bool | None:
        """Was an entry delivered to ``name`` within dead-after? None: cannot tell."""
        if pending == 0:
            return False
        seen, stale = self.seen.get(name, 0), self.stale.get(name, 0)
        if self.floor is None:
            return seen > stale
        if self.floor <= self.dead_after_ms:
            # Unseen entries are idle below the floor, so below dead-after too.
            return max(pending, seen) > stale
        return None if pending > seen else seen > stale

    def candidates(self) -> dict[bytes, list[bytes]]:
        """Per consumer, the newest ids seen, newest first."""
        return self.newest


_owner_of = itemgetter(1)
_idle_of = itemgetter(2)
_deliveries_of = itemgetter(3)


def inspect_stream(
    conn: Connection,
    stream: bytes,
    group: bytes | None = None,
    *,
    oldest: int = DEFAULT_OLDEST,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    pel_scan: bool = True,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    lock_key: str | None = None,
    detect_locks: bool = True,
) -> StreamInspection:
    """``pel_scan``: also walk each group's PEL (bounded calls) for the idle-threshold
    counts, the longest-idle entry and the ghost count; False skips those (cheap refresh).

    Each consumer's verdict comes from :func:`pelctl.core.liveness.judge_group` with
    ``dead_after_ms`` (any duration), the server's idle semantics, what the scan saw of its
    PEL, its ``lock_key`` locks (a ``--lock-key`` pattern) and at most one ``CLIENT LIST``
    for the whole stream.

    Without ``lock_key`` and with ``detect_locks``, a group whose advice would repair
    something (poison suspects, a consumer holding entries quiet for ``dead_after_ms``)
    gets the common patterns of :data:`LOCK_PATTERNS` tried on a bounded sample of the
    entries already read (:func:`detect_lock_key`); a pattern found is then used like a
    given one: for the verdicts, and offered as ``--lock-key`` in the advice."""
    if lock_key:
        from pelctl.core.locks import check_lock_pattern

        check_lock_pattern(lock_key)
    given_lock = lock_key
    budget = LOCK_DETECT_KEYS  # EXISTS calls left for detect_lock_key
    lock_by: dict[bytes, str | None] = {}  # per group: the pattern given or found there
    rows = group_rows(conn, stream)  # raises StreamNotFound / WrongType
    if group is not None:
        rows = [r for r in rows if r[b"name"] == group]
        if not rows:
            raise GroupNotFound(
                f"group {escape(group)} not found on stream {escape(stream)}",
                hint=f"see its groups: {command_line('inspect', [stream])}",
            )
    raw = conn.raw(stream)
    now = int(time.time() * 1000)
    with redis_errors("inspect"):
        pipe = raw.pipeline(transaction=False)
        pipe.execute_command("XLEN", stream)
        pipe.execute_command("XRANGE", stream, "-", "+", "COUNT", 1)
        pipe.execute_command("XREVRANGE", stream, "+", "-", "COUNT", 1)
        for row in rows:
            name = row[b"name"]
            pipe.execute_command("XINFO", "CONSUMERS", stream, name)
            pipe.execute_command("XPENDING", stream, name)
            pipe.execute_command("XPENDING", stream, name, "-", "+", oldest)
        replies = pipe.execute()
        dlq = default_dlq(stream)
        dlq_raw = conn.raw(dlq)
        dlq_len = None
        if dlq_raw.execute_command("TYPE", dlq) == b"stream":
            dlq_len = int(dlq_raw.execute_command("XLEN", dlq))
    length, first, last = replies[0], replies[1], replies[2]
    groups: list[GroupInfo] = []
    bounds_cache: list[StreamBounds] = []

    def bounds_of() -> StreamBounds:
        if not bounds_cache:
            bounds_cache.append(stream_bounds(conn, stream))
        return bounds_cache[0]

    consumer_rows = [reply_rows(replies[3 + 3 * i]) for i in range(len(rows))]
    clients = liveness.clients_once(conn, stream)  # one CLIENT LIST for the stream, if needed

    modern = liveness.is_modern(conn.caps)
    poison_by: dict[bytes, Counter[bytes]] = {}
    for i, row in enumerate(rows):
        summary, oldest_rows = replies[4 + 3 * i], replies[5 + 3 * i]
        count, min_id, max_id, per = summary
        pel = PelSummary(
            count=int(count),
            min_id=min_id,
            max_id=max_id,
            per_consumer=tuple((c, int(n)) for c, n in (per or [])),
        )
        lag = row.get(b"lag")
        entries_read = row.get(b"entries-read")
        idle_counts, ghosts = None, None
        lock_key = given_lock
        probe_k = (liveness.LOCK_PROBES_PER_CONSUMER if lock_key
                   else LOCK_DETECT_PER_CONSUMER if detect_locks else 0)  # fmt: skip
        tally = LivenessTally(dead_after_ms, probe_k)
        if pel_scan:
            idle_counts, ghosts = pel_health(
                conn, stream, row[b"name"], int(count), max_server_ms=max_server_ms,
                bounds=bounds_of(), tally=tally,
            )  # fmt: skip
        poison_by[row[b"name"]] = tally.poison
        facts = [
            ConsumerFacts(
                f.name,
                f.pending,
                f.idle_ms,
                f.inactive_ms,
                tally.fresh(f.name, f.pending) if pel_scan else None,
            )  # fmt: skip
            for f in liveness.consumer_facts(consumer_rows[i])
        ]
        if (
            not lock_key
            and detect_locks
            and budget > 0
            and _would_repair(facts, dead_after_ms, idle_counts, oldest_rows)
        ):
            sample = [(bytes(r[0]), bytes(r[1])) for r in oldest_rows]
            lock_key, used = detect_lock_key(
                conn, stream, row[b"name"], tally.candidates(), sample, budget=budget
            )
            budget -= used
        lock_by[row[b"name"]] = lock_key
        judged = liveness.judge_group(
            facts,
            modern=modern,
            dead_after_ms=dead_after_ms,
            locks=liveness.lock_probe(conn, stream, row[b"name"], lock_key, tally.candidates())
            if lock_key
            else None,
            clients=clients,
        )
        consumers = [
            ConsumerInfo(
                name=f.name,
                pending=f.pending,
                idle_ms=f.idle_ms,
                inactive_ms=f.inactive_ms,
                verdict=judged[f.name].verdict,
                verdict_reason=judged[f.name].reason,
            )
            for f in facts
        ]
        groups.append(
            GroupInfo(
                name=row[b"name"],
                consumers_count=int(row[b"consumers"]),
                pending=int(row[b"pending"]),
                last_delivered_id=row[b"last-delivered-id"],
                entries_read=int(entries_read) if entries_read is not None else None,
                lag=int(lag) if lag is not None else None,
                consumers=tuple(consumers),
                pel=pel,
                oldest=tuple(PendingEntry(r[0], r[1], int(r[2]), int(r[3])) for r in oldest_rows),
                idle_counts=idle_counts,
                ghosts=ghosts,
            )
        )
    return StreamInspection(
        stream=stream,
        length=int(length),
        first_id=first[0][0] if first else None,
        last_id=last[0][0] if last else None,
        groups=tuple(groups),
        server=conn.caps.label,
        now_ms=now,
        advice=tuple(advise(stream, groups, dlq_len, lock_by=lock_by, poison_by=poison_by)),
        dlq=dlq if dlq_len is not None else None,
        dlq_length=dlq_len,
    )


def count_poison(page: list) -> int:  # raw XPENDING rows
    """Rows delivered at least ``POISON_DELIVERIES`` times (poison suspects)."""
    return sum(1 for d in map(_deliveries_of, page) if d >= POISON_DELIVERIES)


def count_thresholds(page: list, edges: Sequence[int], counter: Counter[int]) -> None:
    """``counter[i]``: rows with ``edges[i-1] <= idle < edges[i]`` (``[lo, hi)``)."""
    counter.update(map(partial(bisect_right, edges), map(_idle_of, page)))


def at_least(counter: Counter[int], n_edges: int) -> tuple[int, ...]:
    """From :func:`count_thresholds`' counter, the rows idle at least each edge (XPENDING
    IDLE semantics: ``idle >= edge``); "at least ``edges[k]``" sums the buckets ``i > k``."""
    return tuple(sum(n for i, n in counter.items() if i > k) for k in range(n_edges))


def pel_health(
    conn: Connection,
    stream: bytes,
    group: bytes,
    pending: int,
    *,
    thresholds_ms: tuple[int, ...] = IDLE_THRESHOLDS_MS,
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    bounds: StreamBounds | None = None,
    tally: LivenessTally | None = None,
) -> tuple[IdleCounts, int]:
    """Idle-threshold counts, the longest-idle entry and the ghost count of one group.

    The same engine and bounds as every PEL walk: a small PEL is read whole; a large one
    through XPENDING IDLE windows at the lowest threshold, so only idle entries cross the
    wire. Counts are "idle at least the threshold" (XPENDING IDLE semantics).
    """
    edges = tuple(sorted(thresholds_ms))
    if pending == 0:
        return IdleCounts(edges, (0,) * len(edges), 0, None), 0
    raw = conn.raw(stream)
    floor = None if pending <= FULL_SCAN_MAX else edges[0]
    if tally is not None:
        tally.floor = floor
    scan = PelScan(raw, stream, group, min_idle_ms=floor, max_server_ms=max_server_ms)
    counter: Counter[int] = Counter()
    longest_row = None
    scanned = poison = 0
    for page in scan.pages():
        scanned += len(page)
        poison += count_poison(page)
        count_thresholds(page, edges, counter)
        if tally is not None:
            tally.add(page)
        top = max(page, key=_idle_of)
        if longest_row is None or top[2] > longest_row[2]:
            longest_row = top
    counts = at_least(counter, len(edges))
    longest = None
    if longest_row is not None:
        entry_id, owner, idle, deliveries = longest_row
        longest = PendingEntry(entry_id, owner, int(idle), int(deliveries))
    ghosts = count_ghosts(
        conn, stream, group, max_server_ms=max_server_ms, bounds=bounds, check=False
    )
    return IdleCounts(edges, counts, scanned, longest, poison), ghosts


def _would_repair(
    facts: list[ConsumerFacts],
    dead_after_ms: int,
    idle_counts: IdleCounts | None,
    oldest_rows: list,  # raw XPENDING rows
) -> bool:
    """Would the group's advice offer a repair (so lock keys matter)? Poison suspects, or
    a consumer holding entries that has been quiet for ``dead_after_ms``."""
    if idle_counts is not None and idle_counts.poison:
        return True
    if any(int(r[3]) >= POISON_DELIVERIES for r in oldest_rows):
        return True
    return any(f.pending and f.idle_ms >= dead_after_ms for f in facts)


def detect_lock_key(
    conn: Connection,
    stream: bytes,
    group: bytes,
    candidates: dict[bytes, list[bytes]],
    sample: list[tuple[bytes, bytes]] = (),  # type: ignore[assignment]
    *,
    budget: int = LOCK_DETECT_KEYS,
) -> tuple[str | None, int]:
    """(the first pattern of :data:`LOCK_PATTERNS` with a lock key held for one of the
    entries, the number of keys probed). ``candidates``: per consumer, ids already read
    (newest first); ``sample``: more (id, owner) pairs (the oldest rows). At most
    LOCK_DETECT_PER_CONSUMER ids a consumer, LOCK_DETECT_IDS in all, ``budget`` EXISTS in one
    pipeline. A key the ACL hides is a key not seen, never an error."""
    from pelctl.core.locks import lock_key as render

    pairs: dict[bytes, bytes] = {}
    for owner, ids in candidates.items():
        for entry_id in ids[:LOCK_DETECT_PER_CONSUMER]:
            pairs.setdefault(entry_id, owner)
    for entry_id, owner in sample:
        pairs.setdefault(entry_id, owner)
    chosen = list(pairs.items())[:LOCK_DETECT_IDS]
    keys = [(pattern, render(pattern, stream, group, entry_id, owner))
            for pattern in LOCK_PATTERNS for entry_id, owner in chosen]  # fmt: skip
    keys = keys[: max(budget, 0)]
    if not keys:
        return None, 0
    with redis_errors("EXISTS"):
        pipe = conn.client.pipeline(transaction=False)
        for _pattern, key in keys:
            pipe.exists(key)
        found = pipe.execute(raise_on_error=False)
    for (pattern, _key), n in zip(keys, found, strict=True):
        if isinstance(n, int) and n > 0:
            return pattern, len(keys)
    return None, len(keys)


def advise(
    stream: bytes,
    groups: list[GroupInfo],
    dlq_len: int | None,
    *,
    lock_by: dict[bytes, str | None] | None = None,
    poison_by: dict[bytes, Counter[bytes]] | None = None,
) -> list[Advice]:
    """A runbook, safe to follow in order; each command is copy-pastable
    (:func:`pelctl.core.cmdline.command_line`: quoted, escaped, and ``--`` before names that
    start with ``-``). Per group:

    1. poison suspects (delivered POISON_DELIVERIES+ times) to the dead-letter stream, first;
    2. the entries of each dead consumer requeued, one ``--consumer`` at a time (never an
       ``--idle`` sweep that would take live consumers' entries too), with
       ``--below-deliveries`` when the group has poison suspects (a requeue never re-delivers
       poison, whatever the order it is run in);
    3. consumers whose liveness is ``unknown``: the same repair, hedged, with how to find out;
    4. what else looks wrong (no consumers, ghosts, entries idle over an hour).

    ``lock_by``: per group, the lock-key pattern given or found there
    (:func:`detect_lock_key`); every repair of the group then carries it, so a slow but
    alive worker's entries are skipped. ``poison_by``: per group, poison suspects per
    consumer (from the scan): a consumer holding nothing else gets no requeue."""
    out: list[Advice] = []
    for g in groups:
        names = (stream, g.name)
        lock_key = (lock_by or {}).get(g.name)
        lock: list[str | tuple[str, bytes | str]] = [("--lock-key", lock_key)] if lock_key else []
        per = (poison_by or {}).get(g.name) or Counter()
        poison = g.idle_counts.poison if g.idle_counts is not None else 0
        if not poison and g.oldest:
            poison = sum(1 for e in g.oldest if e.deliveries >= POISON_DELIVERIES)
        if poison:
            held = f" held by {_who(per)}" if per else ""
            skip = "; lock-held entries are skipped" if lock_key else ""
            out.append(
                Advice(
                    f"group {escape(g.name)} has {_entries(poison)} delivered "
                    f"{POISON_DELIVERIES}+ times, poison suspects{held}: quarantine them in "
                    f"the dead-letter stream first, before any requeue{skip}",
                    command_line(
                        "dlq move",
                        names,
                        [("--min-deliveries", str(POISON_DELIVERIES)), *lock, "--dry-run"],
                    ),
                )
            )
        below: list[str | tuple[str, bytes | str]] = (
            [("--below-deliveries", str(POISON_DELIVERIES))] if poison else []
        )
        dead = [c for c in g.consumers if c.verdict == liveness.DEAD_SUSPECT and c.pending]
        unknown = [c for c in g.consumers if c.verdict == liveness.UNKNOWN and c.pending]
        # One holding only poison suspects has nothing left once they are quarantined.
        dead = [c for c in dead if per.get(c.name, 0) < c.pending]
        unknown = [c for c in unknown if per.get(c.name, 0) < c.pending]
        tail = _requeue_tail(bool(poison), lock_key)
        for c in dead[:ADVICE_CONSUMERS]:
            out.append(
                Advice(
                    f"consumer {escape(c.name)} holds {_entries(c.pending)} in group "
                    f"{escape(g.name)}, unseen for > {format_duration_ms(c.idle_ms)} "
                    f"(dead suspect: {c.verdict_reason}); requeue them{tail}",
                    command_line(
                        "requeue", names, [("--consumer", c.name), *below, *lock, "--dry-run"]
                    ),
                )  # fmt: skip
            )
        if len(dead) > ADVICE_CONSUMERS:
            rest = dead[ADVICE_CONSUMERS:]
            out.append(
                Advice(
                    f"{len(rest):,} more dead suspects ({_names(rest)}) hold "
                    f"{_entries(sum(c.pending for c in rest))} in group {escape(g.name)}: "
                    "requeue each the same way (--consumer NAME)"
                )
            )
        if unknown:
            out += _unknown_advice(names, unknown, [*below, *lock], tail, lock_key, per)
        if g.lag and g.lag > 0 and not g.consumers:
            out.append(Advice(f"group {escape(g.name)} has a lag of {g.lag:,} and no consumers"))
        if g.ghosts:
            out.append(
                Advice(
                    f"group {escape(g.name)} has {g.ghosts:,} pending "
                    f"entr{'y' if g.ghosts == 1 else 'ies'} whose stream entry is gone (ghosts)",
                    command_line("ghosts", names),
                )
            )
        hour = _idle_at_least(g, 3_600_000)
        if hour and not dead and not unknown:  # their advice already covers them
            out.append(
                Advice(
                    f"group {escape(g.name)} has {hour:,} "
                    f"entr{'y' if hour == 1 else 'ies'} idle > 1h",
                    command_line("pending", names, [("--idle", "1h")]),
                )
            )
    if dlq_len:
        out.append(
            Advice(f"dead-letter stream {escape(default_dlq(stream))} holds {_entries(dlq_len)}")
        )
    return out


def _requeue_tail(poison: bool, lock_key: str | None) -> str:
    parts = []
    if poison:
        parts.append(f"poison suspects left out (--below-deliveries {POISON_DELIVERIES})")
    if lock_key:
        parts.append("lock-held entries skipped (--lock-key)")
    return f", {' and '.join(parts)}" if parts else ""


def _who(per: Counter[bytes]) -> str:
    return ", ".join(f"{escape(n)} ({c:,})" for n, c in per.most_common(3)) + (
        f" and {len(per) - 3:,} more" if len(per) > 3 else ""
    )


def _names(consumers: list[ConsumerInfo]) -> str:
    return ", ".join(escape(c.name) for c in consumers[:3]) + ("…" if len(consumers) > 3 else "")


def _unknown_advice(
    names: tuple[bytes, bytes],
    unknown: list[ConsumerInfo],
    extra: list[str | tuple[str, bytes | str]],
    tail: str,
    lock_key: str | None,
    poison: Counter[bytes],
) -> list[Advice]:
    """Consumers holding entries whose liveness nothing shows: say so, say how to find out,
    and offer the repair, one consumer at a time, only for once its worker is known to be
    gone."""
    held = sum(c.pending for c in unknown)
    idle = min(c.idle_ms for c in unknown)
    n = len(unknown)
    blocked = any(c.verdict_reason.startswith(liveness.BLOCKED_READER) for c in unknown)
    why = (
        "a client has been blocked in XREADGROUP as long (a BLOCK 0 worker?)"
        if blocked
        else "below Redis 7.2 idle does not refresh while a worker waits in XREADGROUP"
    )
    name = f"a client named {escape(unknown[0].name)}" if n == 1 else "clients named like them"
    signals = f"the process; {name} in CLIENT LIST" + ("" if lock_key else "; inspect --lock-key")
    head = (
        f"{n} consumer{'s' if n != 1 else ''} ({_names(unknown)}) hold{'s' if n == 1 else ''} "
        f"{_entries(held)} in group {escape(names[1])}, quiet for > {format_duration_ms(idle)}, "
        f"liveness unknown ({why}); "
    )
    if n == 1:
        head += f"once its worker is known to be gone ({signals}), requeue its entries{tail}:"
    else:
        head += (f"requeue a consumer's entries once its worker is known to be gone "
                 f"({signals}), one consumer at a time{tail}:")  # fmt: skip

    def repair(c: ConsumerInfo) -> str:
        return command_line("requeue", names, [("--consumer", c.name), *extra, "--dry-run"])

    if n == 1:
        return [Advice(head, repair(unknown[0]))]
    out = [Advice(head)]
    for c in unknown[:ADVICE_CONSUMERS]:
        left = f" ({poison[c.name]:,} poison suspects among them)" if poison.get(c.name) else ""
        out.append(
            Advice(
                f"{escape(c.name)}: {_entries(c.pending)}{left}, quiet for > "
                f"{format_duration_ms(c.idle_ms)}, once its worker is known to be gone:",
                repair(c),
            )
        )
    if n > ADVICE_CONSUMERS:
        rest = unknown[ADVICE_CONSUMERS:]
        out.append(Advice(f"{len(rest):,} more ({_names(rest)}): the same, one at a time"))
    return out


def _entries(n: int) -> str:
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _idle_at_least(g: GroupInfo, threshold_ms: int) -> int:
    ic = g.idle_counts
    if ic is None or threshold_ms not in ic.thresholds_ms:
        return 0
    return ic.counts[ic.thresholds_ms.index(threshold_ms)]
