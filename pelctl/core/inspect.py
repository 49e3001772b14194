"""``pelctl inspect``: one stream, its groups, consumers, PEL summary and advice."""

from __future__ import annotations

import itertools
import time
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from operator import itemgetter

from pelctl.core import liveness
from pelctl.core.binary import escape
from pelctl.core.cmdline import command_line
from pelctl.core.durations import format_duration_ms
from pelctl.core.errors import GroupNotFound
from pelctl.core.ghosts import StreamBounds, count_ghosts, stream_bounds
from pelctl.core.liveness import DEFAULT_DEAD_AFTER_MS, ConsumerFacts
from pelctl.core.models import (
    Advice,
    ConsumerInfo,
    GroupInfo,
    IdleCounts,
    PelSummary,
    PendingEntry,
    StreamInspection,
)
from pelctl.core.targets import _pairs, group_rows
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS, PelScan

# Idle thresholds counted by inspect (> 1m, > 10m, > 1h), from one bounded scan.
IDLE_THRESHOLDS_MS = (60_000, 600_000, 3_600_000)
# Up to this many pending entries inspect reads the whole PEL (so the longest-idle entry is
# known even when nothing is idle over the first threshold); above it, only what the server
# finds idle over the first threshold crosses the wire (XPENDING IDLE windows).
FULL_SCAN_MAX = 10_000
DEFAULT_OLDEST = 5
POISON_DELIVERIES = 5  # deliveries at which an entry counts as a poison suspect
__all__ = ["DEFAULT_DEAD_AFTER_MS", "dlq_key", "inspect_stream", "pel_health"]


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

    def add(self, page: list) -> None:  # noqa: ANN401 - raw XPENDING rows
        owners = list(map(_owner_of, page))
        self.seen.update(owners)
        if self.floor is not None and self.floor >= self.dead_after_ms:
            self.stale.update(owners)  # every row of an IDLE-floored scan is that old
        else:
            self.stale.update(compress(owners, map(self.dead_after_ms.__le__, map(_idle_of, page))))
        if self.lock_k:
            self._newest(page, set(owners))

    def _newest(self, page: list, owners: set[bytes]) -> None:  # noqa: ANN401
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


def dlq_key(stream: bytes) -> bytes:
    return stream + b":dlq"


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
) -> StreamInspection:
    """``pel_scan``: also walk each group's PEL (bounded calls) for the idle-threshold
    counts, the longest-idle entry and the ghost count; False skips those (cheap refresh).

    Each consumer's verdict comes from :func:`pelctl.core.liveness.judge_group` with
    ``dead_after_ms`` (any duration), the server's idle semantics, what the scan saw of its
    PEL, its ``lock_key`` locks (a ``--lock-key`` pattern) and at most one ``CLIENT LIST``
    for the whole stream."""
    if lock_key:
        from pelctl.core.repair import check_lock_pattern

        check_lock_pattern(lock_key)
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
        dlq = dlq_key(stream)
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

    consumer_rows = [[_pairs(c) for c in replies[3 + 3 * i]] for i in range(len(rows))]
    clients = liveness.clients_once(conn, stream)  # one CLIENT LIST for the stream, if needed

    modern = liveness.is_modern(conn.caps)
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
        tally = LivenessTally(dead_after_ms, liveness.LOCK_PROBES_PER_CONSUMER if lock_key else 0)
        if pel_scan:
            idle_counts, ghosts = pel_health(
                conn, stream, row[b"name"], int(count), max_server_ms=max_server_ms,
                bounds=bounds_of(), tally=tally,
            )  # fmt: skip
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
        advice=tuple(advise(stream, groups, dlq_len)),
        dlq=dlq if dlq_len is not None else None,
        dlq_length=dlq_len,
    )


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
    bucket_of = partial(bisect_right, edges)
    idle_of = itemgetter(2)
    deliveries_of = itemgetter(3)
    longest_row = None
    scanned = poison = 0
    for page in scan.pages():
        scanned += len(page)
        poison += sum(1 for d in map(deliveries_of, page) if d >= POISON_DELIVERIES)
        counter.update(map(bucket_of, map(idle_of, page)))
        if tally is not None:
            tally.add(page)
        top = max(page, key=idle_of)
        if longest_row is None or top[2] > longest_row[2]:
            longest_row = top
    # counter[i]: entries with edges[i-1] <= idle < edges[i]; "at least edges[k]" sums i > k.
    counts = tuple(sum(n for i, n in counter.items() if i > k) for k in range(len(edges)))
    longest = None
    if longest_row is not None:
        entry_id, owner, idle, deliveries = longest_row
        longest = PendingEntry(entry_id, owner, int(idle), int(deliveries))
    ghosts = count_ghosts(
        conn, stream, group, max_server_ms=max_server_ms, bounds=bounds, check=False
    )
    return IdleCounts(edges, counts, scanned, longest, poison), ghosts


def advise(stream: bytes, groups: list[GroupInfo], dlq_len: int | None) -> list[Advice]:
    """Runbook lines; each command is copy-pastable (:func:`pelctl.core.cmdline.command_line`:
    quoted, escaped, and ``--`` before names that start with ``-``)."""
    out: list[Advice] = []
    for g in groups:
        names = (stream, g.name)
        dead = [c for c in g.consumers if c.verdict == liveness.DEAD_SUSPECT]
        unknown = [c for c in g.consumers if c.verdict == liveness.UNKNOWN and c.pending]
        if dead:
            held = sum(c.pending for c in dead)
            idle = min(c.idle_ms for c in dead)
            who = ", ".join(escape(c.name) for c in dead[:3]) + ("…" if len(dead) > 3 else "")
            out.append(
                Advice(
                    f"{len(dead)} consumer{'s' if len(dead) != 1 else ''} ({who}) "
                    f"hold{'s' if len(dead) == 1 else ''} "
                    f"{_entries(held)} in group {escape(g.name)}, unseen for "
                    f"> {format_duration_ms(idle)}",
                    command_line("requeue", names, [("--consumer", dead[0].name), "--dry-run"])
                    if len(dead) == 1
                    else command_line(
                        "requeue", names, [("--idle", format_duration_ms(idle)), "--dry-run"]
                    ),
                )
            )
        if unknown:
            out.append(_unknown_advice(names, unknown))
        if g.lag and g.lag > 0 and not g.consumers:
            out.append(Advice(f"group {escape(g.name)} has a lag of {g.lag:,} and no consumers"))
        poison = g.idle_counts.poison if g.idle_counts is not None else 0
        if not poison and g.oldest:
            poison = sum(1 for e in g.oldest if e.deliveries >= POISON_DELIVERIES)
        if poison:
            out.append(
                Advice(
                    f"group {escape(g.name)} has {_entries(poison)} delivered "
                    f"{POISON_DELIVERIES}+ times (poison suspects)",
                    command_line(
                        "dlq move",
                        names,
                        [("--min-deliveries", str(POISON_DELIVERIES)), "--dry-run"],
                    ),
                )
            )
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
            Advice(f"dead-letter stream {escape(dlq_key(stream))} holds {_entries(dlq_len)}")
        )
    return out


def _unknown_advice(names: tuple[bytes, bytes], unknown: list[ConsumerInfo]) -> Advice:
    """Consumers holding entries whose liveness nothing shows: say so, say how to find out,
    and offer the repair only for once their worker is known to be gone."""
    held = sum(c.pending for c in unknown)
    idle = min(c.idle_ms for c in unknown)
    n = len(unknown)
    who = ", ".join(escape(c.name) for c in unknown[:3]) + ("…" if n > 3 else "")
    blocked = any(c.verdict_reason.startswith(liveness.BLOCKED_READER) for c in unknown)
    why = (
        "a client has been blocked in XREADGROUP as long (a BLOCK 0 worker?)"
        if blocked
        else "below Redis 7.2 idle does not refresh while a worker waits in XREADGROUP"
    )
    repair = (
        command_line("requeue", names, [("--consumer", unknown[0].name), "--dry-run"])
        if n == 1
        else command_line("requeue", names, [("--idle", format_duration_ms(idle)), "--dry-run"])
    )
    name = f"a client named {escape(unknown[0].name)}" if n == 1 else "clients named like them"
    return Advice(
        f"{n} consumer{'s' if n != 1 else ''} ({who}) hold{'s' if n == 1 else ''} "
        f"{_entries(held)} in group {escape(names[1])}, quiet for > {format_duration_ms(idle)}, "
        f"liveness unknown ({why}); once {'its worker is' if n == 1 else 'their workers are'} "
        f"known to be gone (the process; {name} in CLIENT LIST; inspect --lock-key):",
        repair,
    )


def _entries(n: int) -> str:
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _idle_at_least(g: GroupInfo, threshold_ms: int) -> int:
    ic = g.idle_counts
    if ic is None or threshold_ms not in ic.thresholds_ms:
        return 0
    return ic.counts[ic.thresholds_ms.index(threshold_ms)]
