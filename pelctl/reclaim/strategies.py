"""How a pass finds idle entries and hands them to :class:`~pelctl.reclaim.settle.Settler`.

- ``requeue`` (default) and ``claim --to C``: discovery with the scan engine's server-side
  ``XPENDING IDLE`` filter over the WHOLE PEL (bounded id windows, each call under
  ``max_server_ms``), then the verified repair scripts in batches. Lock keys are checked in
  the same script, before anything is taken.
- ``autoclaim``: an ``XAUTOCLAIM ... JUSTID`` cursor that is kept across passes (and across
  reconnections): each call examines at most COUNT x 10 PEL entries and the next call goes
  on from there, so the whole PEL is covered (the trap of reference 000 restarts at 0-0).
  Entries are taken into the runner's own consumer, then settled by the same scripts.
  XAUTOCLAIM also drops entries deleted from the stream (Redis 7.0+; counted as ghosts).
- ``auto``: ``claim`` with ``--to``, else ``requeue``.

A sidecar never uses ``XREADGROUP ... CLAIM`` (Redis 8.4+): the command shares its COUNT
between idle entries and new ones, so once fewer idle entries remain than COUNT it also
reads entries no consumer has had yet — on a lagging group, a sidecar would take the
backlog's head and re-add it at the tail with a false history. CLAIM belongs in the
worker's own read loop, where reading new entries is the point
(:class:`pelctl.ReliableConsumer`); ``--strategy xreadgroup-claim`` is refused with a line
that says so.

``--read-only``: every strategy discovers with ``XPENDING IDLE`` and reports what it would
do (lock keys and retry counts probed, nothing taken).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import redis.exceptions as rex

from pelctl.core.models import RUNNER_CONSUMER_PREFIX
from pelctl.core.mutations.outcomes import ItemResult
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import PassCounts, ReclaimConfig
from pelctl.reclaim.settle import Settler, Taken
from pelctl.redis.capabilities import Capabilities
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.scripts import script

if TYPE_CHECKING:
    import redis

# XAUTOCLAIM examines at most COUNT x 10 PEL entries a call, a few microseconds each (it
# checks that each one still exists in the stream): COUNT 100 keeps a call near 3 ms.
AUTOCLAIM_COUNT = 100


def own_consumer() -> bytes:
    """The runner's consumer for the take strategies: unique per process, so the runner is
    the only one that ever adds to it, and it can delete it once it holds nothing."""
    return RUNNER_CONSUMER_PREFIX + f"{socket.gethostname()}-{os.getpid()}".encode()


def resolve(cfg: ReclaimConfig, caps: Capabilities) -> str:
    """The concrete strategy for ``cfg.strategy`` on a server with ``caps``."""
    if cfg.strategy != "auto":
        return cfg.strategy
    return "claim" if cfg.to is not None else "requeue"


@dataclass
class State:
    """What survives from one pass to the next (and across reconnections)."""

    autoclaim_cursor: dict[bytes, bytes] = field(default_factory=dict)
    sweep_cursor: dict[bytes, bytes] = field(default_factory=dict)


@dataclass
class StreamRun:
    """One stream's share of a pass: what the strategy needs and where results go."""

    conn: Connection
    cfg: ReclaimConfig
    stream: bytes
    counts: PassCounts
    stop: threading.Event
    log: logging.Logger
    record: Callable[[ItemResult, int], None]
    state: State
    consumer: bytes
    full: bool = False  # --once: sweeps run to the end of the PEL
    pel_size: int | None = None

    @property
    def group(self) -> bytes:
        return self.cfg.group

    def stopping(self) -> bool:
        return self.stop.is_set()

    def settler(self) -> Settler:
        return Settler(self.conn, self.cfg, self.stream, self.group, self.record)

    def batch_done(self, n: int) -> None:
        event(
            self.log,
            logging.DEBUG,
            "batch",
            stream=self.stream,
            group=self.group,
            entries=n,
            requeued=self.counts.requeued,
            claimed=self.counts.claimed,
            dead_lettered=self.counts.dead_lettered,
        )


# -- discovery with XPENDING IDLE (requeue, claim, and every strategy in read-only mode) ----


def run_scan(run: StreamRun, *, preview: bool = False) -> None:
    from pelctl.redis.scan import PelScan

    cfg = run.cfg
    settler = run.settler()
    settle = settler.preview if preview else settler.found
    scan = PelScan(run.conn.raw(run.stream), run.stream, run.group, min_idle_ms=cfg.idle_ms)
    pages = scan.pages()
    buf: list = []
    try:
        for page in pages:
            run.counts.scanned += len(page)
            buf.extend(page)
            while len(buf) >= cfg.batch and not run.stopping():
                batch, buf = buf[: cfg.batch], buf[cfg.batch :]
                settle(batch)
                run.batch_done(len(batch))
            if run.stopping():
                break
        if buf and not run.stopping():
            settle(buf)
            run.batch_done(len(buf))
            buf = []
        # The batch in flight was finished; what was found but not started is not counted.
        run.counts.scanned -= len(buf)
    finally:
        pages.close()
        run.pel_size = scan.total


# -- autoclaim: XAUTOCLAIM cursor kept across passes -------------------------------------------


def run_autoclaim(run: StreamRun) -> None:
    run.conn.caps.require("xautoclaim")
    cfg = run.cfg
    raw = run.conn.raw(run.stream)
    settler = run.settler()
    me = run.consumer
    count = max(1, min(cfg.batch, AUTOCLAIM_COUNT))
    cursor = run.state.autoclaim_cursor.get(run.stream, b"0-0")
    try:
        while not run.stopping():
            with redis_errors("XAUTOCLAIM"):
                reply = raw.execute_command(
                    "XAUTOCLAIM",
                    run.stream,
                    run.group,
                    me,
                    cfg.idle_ms,
                    cursor,
                    "COUNT",
                    count,
                    "JUSTID",
                )
            cursor = bytes(reply[0])
            run.state.autoclaim_cursor[run.stream] = cursor
            ids = [bytes(i) for i in reply[1]]
            for deleted in reply[2] if len(reply) > 2 else ():
                # XAUTOCLAIM (7.0+) already removed these PEL entries: their stream entry is gone.
                run.record(ItemResult(bytes(deleted), "ghost", "dropped by XAUTOCLAIM"), 0)
            if ids:
                run.counts.scanned += len(ids)
                deliveries = _deliveries(raw, run.stream, run.group, me, ids)
                taken = [Taken(i, deliveries.get(i, 0), cfg.idle_ms) for i in ids]
                settler.taken(me, taken)
                run.batch_done(len(ids))
            if cursor == b"0-0":
                break
    finally:
        release(run.conn, run.stream, run.group, me)


def _deliveries(
    raw: redis.Redis, stream: bytes, group: bytes, me: bytes, ids: list[bytes]
) -> dict[bytes, int]:
    """Delivery counts of entries ``me`` just took (one XPENDING over ``me``'s own PEL)."""
    with redis_errors("XPENDING"):
        rows = raw.execute_command("XPENDING", stream, group, ids[0], ids[-1], len(ids) + 100, me)
    return {bytes(r[0]): int(r[3]) for r in rows}


def release(conn: Connection, stream: bytes, group: bytes, me: bytes) -> None:
    """Delete the runner's own consumer once it holds nothing, atomically with that check
    (the consumers-prune script), so a pass leaves no consumer of pelctl's in the group.
    Without scripting (a proxy): the check and the delete apart, safe here because only
    this process ever adds to its own consumer. Best effort: an empty consumer left by an
    ACL refusal holds nothing, and the next pass removes it."""
    raw = conn.raw(stream)
    try:
        script("consumer_delete").call(raw, [stream], [group, me, 0])
        return
    except rex.ResponseError as err:
        if "unknown command" not in str(err).lower():
            return  # an ACL refusal, or the server's own answer: leave it
    except (rex.ConnectionError, rex.TimeoutError):
        return
    try:
        if not raw.execute_command("XPENDING", stream, group, "-", "+", 1, me):
            raw.execute_command("XGROUP", "DELCONSUMER", stream, group, me)
    except (rex.ResponseError, rex.ConnectionError, rex.TimeoutError):
        pass


def prune_quiet_consumers(run: StreamRun, keep: set[bytes | None]) -> list[bytes]:
    """``--prune-consumers-after D``: delete every consumer of the group that holds nothing
    and has not tried to read for D (XINFO CONSUMERS ``idle``: from Redis 7.2 the time since
    its last read attempt, so a worker polling an empty stream is never pruned; it also
    means inactive for at least D), except ``keep``. Each delete re-checks both conditions
    in the same script (``consumer_delete``): a consumer that took an entry or read since
    the listing is left alone. Read-only: the consumers it would delete, none deleted.
    Workers that die leave their names behind; this keeps a group's consumer list to the
    workers that exist."""
    from pelctl.redis.replies import array, field_pairs

    min_quiet = run.cfg.prune_after_ms
    assert min_quiet is not None
    raw = run.conn.raw(run.stream)
    with redis_errors("XINFO CONSUMERS"):
        rows = raw.execute_command("XINFO", "CONSUMERS", run.stream, run.group)
    quiet = []
    for row in rows:
        info = dict(field_pairs(row))
        name = bytes(info[b"name"])
        if name in keep or int(info[b"pending"]) or int(info[b"idle"]) < min_quiet:
            continue
        quiet.append(name)
    if run.cfg.read_only:
        return quiet
    pruned = []
    for name in quiet:
        if run.stopping():
            break
        with redis_errors("EVALSHA"):
            answer = script("consumer_delete").call(raw, [run.stream], [run.group, name, min_quiet])
        if bytes(array(answer)[0]) == b"deleted":
            pruned.append(name)
            event(
                run.log,
                logging.INFO,
                "consumer-pruned",
                stream=run.stream,
                group=run.group,
                consumer=name,
                quiet_ms=min_quiet,
            )
    return pruned


RUNNERS: dict[str, Callable[[StreamRun], None]] = {
    "requeue": run_scan,
    "claim": run_scan,
    "autoclaim": run_autoclaim,
}


NEEDS = {"autoclaim": "xautoclaim"}


def run_stream(run: StreamRun, strategy: str) -> None:
    if run.cfg.read_only:
        if strategy in NEEDS:  # say it now, not on the first pass that changes something
            run.conn.caps.require(NEEDS[strategy])
        run_scan(run, preview=True)
    else:
        RUNNERS[strategy](run)
