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
- ``xreadgroup-claim`` (Redis 8.4+): ``XREADGROUP ... CLAIM min-idle`` into the runner's own
  consumer, longest idle first, O(k) on the server. It does not drop deleted entries, so
  each pass also runs a ghost sweep (``XAUTOCLAIM`` with a min-idle nothing reaches, cursor
  kept). When fewer idle entries remain than COUNT, the same call also reads new entries:
  the runner hands those back (requeue, or claim to ``--to``) and counts them.
- ``auto``: ``xreadgroup-claim`` where the server has it (and no ``--lock-key``), else
  ``claim`` with ``--to``, else ``requeue``.

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
from typing import TYPE_CHECKING, Any

from pelctl.core.mutations.outcomes import ItemResult
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import PassCounts, ReclaimConfig
from pelctl.reclaim.settle import Settler, Taken
from pelctl.redis.capabilities import Capabilities
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors

if TYPE_CHECKING:
    import redis

# XAUTOCLAIM examines at most COUNT x 10 PEL entries a call, a few microseconds each (it
# checks that each one still exists in the stream): COUNT 100 keeps a call near 3 ms.
AUTOCLAIM_COUNT = 100
# The ghost sweep: XAUTOCLAIM with a min-idle no entry reaches (nothing is claimed) only
# drops PEL entries whose stream entry is gone; 1,000 entries examined per call.
GHOST_SWEEP_COUNT = 100
NEVER_IDLE = 2**62
GHOST_SWEEPER = b"pelctl-ghosts"


def own_consumer() -> bytes:
    """The runner's consumer for the take strategies: unique per process, so the runner is
    the only one that ever adds to it, and it can delete it once it holds nothing."""
    return f"pelctl-reclaim-{socket.gethostname()}-{os.getpid()}".encode()


def resolve(cfg: ReclaimConfig, caps: Capabilities) -> str:
    """The concrete strategy for ``cfg.strategy`` on a server with ``caps``."""
    if cfg.strategy != "auto":
        return cfg.strategy
    if caps.has("xreadgroup_claim") and not cfg.lock_key:
        return "xreadgroup-claim"
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
    record: Callable[[ItemResult, int, bool], None]
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
                run.record(ItemResult(bytes(deleted), "ghost", "dropped by XAUTOCLAIM"), 0, False)
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


# -- xreadgroup-claim (Redis 8.4+) ---------------------------------------------------------------


def run_xreadgroup_claim(run: StreamRun) -> None:
    run.conn.caps.require("xreadgroup_claim")
    cfg = run.cfg
    raw = run.conn.raw(run.stream)
    settler = run.settler()
    me = run.consumer
    count = max(1, cfg.batch)
    try:
        while not run.stopping():
            with redis_errors("XREADGROUP"):
                reply = raw.execute_command(
                    "XREADGROUP",
                    "GROUP",
                    run.group,
                    me,
                    "COUNT",
                    count,
                    "CLAIM",
                    cfg.idle_ms,
                    "STREAMS",
                    run.stream,
                    ">",
                )
            taken = parse_claim_reply(reply)
            claimed = [t for t in taken if not t.new]
            run.counts.scanned += len(claimed)
            if taken:
                settler.taken(me, taken)
                run.batch_done(len(taken))
            if len(claimed) < count:
                break
    finally:
        release(run.conn, run.stream, run.group, me)
    if not run.stopping():
        ghost_sweep(run, None if run.full else cfg.ghost_sweep_calls)


def parse_claim_reply(reply: Any) -> list[Taken]:
    """``XREADGROUP ... CLAIM`` entries: ``[id, fields, idle-ms, times-delivered]``.

    ``times-delivered`` counts the deliveries *before* this one (0 for new entries, which
    also have idle 0). RESP2 (a list of ``[stream, entries]``) or RESP3 (a map).
    """
    if not reply:
        return []
    streams = list(reply.items()) if isinstance(reply, dict) else reply
    out: list[Taken] = []
    for _name, entries in streams:
        for entry in entries or ():
            entry_id = entry[0] if isinstance(entry[0], bytes) else str(entry[0]).encode()
            fields = entry[1]
            idle = int(entry[2]) if len(entry) > 2 else 0
            delivered = int(entry[3]) if len(entry) > 3 else 0
            new = idle == 0 and delivered == 0
            flat = None
            if fields is not None:
                flat = (
                    [x for kv in fields.items() for x in kv]
                    if isinstance(fields, dict)
                    else (list(fields))
                )
            out.append(Taken(entry_id, delivered, idle, flat, new=new, deleted=fields is None))
    return out


def ghost_sweep(run: StreamRun, max_calls: int | None) -> None:
    """Drop deleted entries from the PEL (XAUTOCLAIM, min-idle nothing reaches), the cursor
    kept across passes; at most ``max_calls`` calls (None: to the end of the PEL)."""
    if not run.conn.caps.has("xclaim_drops_deleted"):
        return
    raw = run.conn.raw(run.stream)
    cursor = run.state.sweep_cursor.get(run.stream, b"0-0")
    calls = 0
    while not run.stopping():
        with redis_errors("XAUTOCLAIM"):
            reply = raw.execute_command(
                "XAUTOCLAIM",
                run.stream,
                run.group,
                GHOST_SWEEPER,
                NEVER_IDLE,
                cursor,
                "COUNT",
                GHOST_SWEEP_COUNT,
                "JUSTID",
            )
        cursor = bytes(reply[0])
        run.state.sweep_cursor[run.stream] = cursor
        for deleted in reply[2] if len(reply) > 2 else ():
            run.record(ItemResult(bytes(deleted), "ghost", "dropped by the ghost sweep"), 0, False)
        calls += 1
        if cursor == b"0-0" or (max_calls is not None and calls >= max_calls):
            break


def release(conn: Connection, stream: bytes, group: bytes, me: bytes) -> None:
    """Delete the runner's own consumer once it holds nothing (it never holds entries of
    anybody else's: only this process adds to it). Best effort."""
    raw = conn.raw(stream)
    try:
        if not raw.execute_command("XPENDING", stream, group, "-", "+", 1, me):
            raw.execute_command("XGROUP", "DELCONSUMER", stream, group, me)
    except Exception:  # noqa: BLE001 - a leftover empty consumer is harmless
        pass


RUNNERS: dict[str, Callable[[StreamRun], None]] = {
    "requeue": run_scan,
    "claim": run_scan,
    "autoclaim": run_autoclaim,
    "xreadgroup-claim": run_xreadgroup_claim,
}


NEEDS = {"autoclaim": "xautoclaim", "xreadgroup-claim": "xreadgroup_claim"}


def run_stream(run: StreamRun, strategy: str) -> None:
    if run.cfg.read_only:
        if strategy in NEEDS:  # say it now, not on the first pass that changes something
            run.conn.caps.require(NEEDS[strategy])
        run_scan(run, preview=True)
    else:
        RUNNERS[strategy](run)
