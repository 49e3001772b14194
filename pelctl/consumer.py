"""``pelctl.ReliableConsumer``: the embedded self-healing worker loop (docs/reclaim.md).

::

    import redis, pelctl

    def handle(msg: pelctl.Message) -> None:
        charge(msg.fields[b"order_id"])          # raise to leave it pending (retried later)

    worker = pelctl.ReliableConsumer(
        redis.Redis(host="redis"), "orders", "billing", "worker-1", handle,
        min_idle="2m", max_deliveries=5, dlq="orders:dlq",
    )
    worker.run()                                   # until worker.stop() (e.g. on SIGTERM)

Each iteration, in one round trip on Redis 8.4+::

    XREADGROUP GROUP g c COUNT n BLOCK ms CLAIM min-idle STREAMS s >

(idle entries of any consumer first, longest idle first, then new ones; the reply carries
each entry's idle time and delivery count). On older servers: an ``XAUTOCLAIM`` cursor kept
across iterations (each call goes on where the previous one stopped, so the whole PEL is
covered, never only its head) plus ``XREADGROUP >`` for new entries — recovery never stops
the reading of new work.

- The handler is called once per entry; the entry is acknowledged after it returns. The
  acknowledgements of a batch go out together, in one ``XACK``, at the latest 100 ms (or a
  quarter of ``min_idle``) after the first of them: one round trip a batch, not one an
  entry. An exception leaves the entry pending: it is delivered again once idle for
  ``min_idle``, here or in any other worker of the group.
- An entry about to be delivered for the ``max_deliveries + 1``-th time goes to the dead-letter
  stream instead, with the dead-letter envelope of docs/formats.md (``dlq-move`` script; original
  fields untouched plus ``_dlq_*``). The handler sees a message at most ``max_deliveries`` times.
  The dead letter keeps the message's lineage (:mod:`pelctl.core.lineage`: the ``_original_id`` /
  ``_prior_deliveries`` of a requeued or replayed copy are among its fields, and ``_dlq_deliveries``
  is the PEL count, on the script path and without Lua alike), so ``pelctl dlq list`` shows its
  first id and every delivery.
- ``XREADGROUP ... CLAIM`` does not drop entries deleted from the stream, so a ghost sweep
  (``XAUTOCLAIM`` with a min-idle nothing reaches, cursor kept) runs every ``sweep_interval``.
- :meth:`ReliableConsumer.stop` (thread-safe) ends :meth:`run` after the entry in hand; a
  blocked read wakes within ``block`` milliseconds.
- ``metrics=True`` (or a :class:`pelctl.reclaim.metrics.ReclaimMetrics`) keeps the same
  Prometheus series as ``pelctl reclaim``; serve them with ``worker.metrics.serve(9108)``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.exceptions as rex

from pelctl.base.durations import Duration, duration_ms
from pelctl.core.models import GHOST_SWEEPER
from pelctl.core.mutations.outcomes import ItemResult
from pelctl.core.repairs.ghosts import release_sweeper
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import ReclaimConfig
from pelctl.reclaim.settle import Settler, Taken, parse_claim_reply
from pelctl.redis.capabilities import Capabilities, from_info
from pelctl.redis.connection import Connection, strip_callbacks
from pelctl.redis.replies import field_pairs, pairs
from pelctl.redis.settings import ConnectionSettings

log = logging.getLogger("pelctl.consumer")

# The ghost sweep (CLAIM mode): XAUTOCLAIM with a min-idle no entry reaches claims nothing and
# only drops PEL entries whose stream entry is gone; at most COUNT x 10 entries examined a call.
GHOST_SWEEP_COUNT = 100
NEVER_IDLE = 2**62


@dataclass(frozen=True, slots=True)
class Message:
    """One delivery of a stream entry to the handler (ids and fields as the client returns
    them: bytes, or str with ``decode_responses=True``)."""

    stream: Any
    id: Any
    fields: dict[Any, Any]
    delivery: int  # 1 on the first delivery, n on the n-th
    claimed: bool  # reclaimed from an idle entry (not a new read)
    idle_ms: int = 0  # how long it had been idle when reclaimed


@dataclass
class ConsumerStats:
    handled: int = 0  # handler returned, entry acknowledged
    failed: int = 0  # handler raised, entry left pending
    reclaimed: int = 0  # idle entries taken over (from any consumer)
    dead_lettered: int = 0
    duplicate_acks: int = 0  # our XACK found the entry already acknowledged
    ghosts: int = 0  # PEL references to deleted entries cleared
    iterations: int = 0
    errors: dict[str, int] = field(default_factory=dict)


def _text(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(value).encode()


class ReliableConsumer:
    """A worker of ``group`` on ``stream`` under the name ``consumer`` that reclaims idle
    entries of dead workers as part of its normal read loop (see the module docstring)."""

    def __init__(
        self,
        client: redis.Redis,
        stream: str | bytes,
        group: str | bytes,
        consumer: str | bytes,
        handler: Callable[[Message], Any],
        *,
        min_idle: Duration = 60_000,
        max_deliveries: int | None = 5,
        dlq: str | bytes | None = None,
        count: int = 10,
        block: Duration = 2_000,
        claim: bool | None = None,
        sweep_interval: Duration | None = None,
        dlq_reason: str | None = None,
        field_prefix: str = "_",
        create_group: bool = False,
        metrics: Any = None,  # True or a ReclaimMetrics
        logger: logging.Logger | None = None,
    ) -> None:
        self.client = client
        self.raw = strip_callbacks(client)
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.handler = handler
        self.min_idle_ms = duration_ms(min_idle)
        if self.min_idle_ms <= 0:
            raise ValueError("min_idle must be more than 0")
        if max_deliveries is not None and max_deliveries < 1:
            raise ValueError("max_deliveries must be at least 1 (None: no limit)")
        self.count = max(1, int(count))
        self.block_ms = max(0, duration_ms(block))
        default_sweep = min(self.min_idle_ms / 2, 5_000) / 1000
        self.sweep_interval_s = (
            max(0.01, duration_ms(sweep_interval) / 1000)
            if sweep_interval is not None
            else max(0.05, default_sweep)
        )
        self.log = logger or log
        self.stats = ConsumerStats()
        self._bstream, self._bgroup, self._bme = _text(stream), _text(group), _text(consumer)
        kwargs = getattr(client, "connection_pool", None)
        self._decode = bool(getattr(kwargs, "connection_kwargs", {}).get("decode_responses"))
        self.cfg = ReclaimConfig(
            streams=(self._bstream,),
            group=self._bgroup,
            idle_ms=self.min_idle_ms,
            max_deliveries=max_deliveries,
            dlq=_text(dlq) if dlq is not None else None,
            reason=dlq_reason,
            field_prefix=field_prefix,
        )
        if metrics is True:
            from pelctl.reclaim.metrics import ReclaimMetrics

            metrics = ReclaimMetrics()
        self.metrics = metrics
        if metrics is not None:
            metrics.touch(self._bstream, self._bgroup)
        self._stop = threading.Event()
        self.caps = self._capabilities()
        if claim is None:
            claim = self.caps is None or self.caps.has("xreadgroup_claim")
        self.mode = "claim" if claim else "autoclaim"
        self._cursor = b"0-0"  # XAUTOCLAIM cursor, kept across iterations
        self._sweep_cursor = b"0-0"  # ghost sweep cursor (CLAIM mode)
        self._next_sweep = 0.0
        self._next_measure = 0.0
        # The acknowledgements of a batch go in one XACK, sent at the latest this long after
        # the first handler returned: a quarter of min_idle at most, so an entry handled here
        # is acknowledged well before another worker may reclaim it.
        self._ack_within_s = min(self.min_idle_ms / 4, 100) / 1000
        conn_caps = self.caps or Capabilities("redis", (8, 4, 0) if claim else (7, 0, 0))
        self._conn = Connection(ConnectionSettings(url="(library)"), client, conn_caps)
        self._settler = Settler(self._conn, self.cfg, self._bstream, self._bgroup, self._record)
        if create_group:
            try:
                self.raw.execute_command("XGROUP", "CREATE", stream, group, "0", "MKSTREAM")
            except rex.ResponseError as err:
                if "BUSYGROUP" not in str(err):
                    raise

    # -- set-up ------------------------------------------------------------------------------
    def _capabilities(self) -> Capabilities | None:
        try:
            info = self.client.info("server")
        except rex.ResponseError:
            return None  # no INFO (a proxy, a test double): CLAIM is tried, then given up
        return from_info(info)

    # -- control -----------------------------------------------------------------------------
    def stop(self) -> None:
        """End :meth:`run` after the entry in hand (thread-safe, signal-handler safe)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        """Iterate until :meth:`stop`. Connection errors are logged and retried with a
        capped backoff; handler errors leave the entry pending and go on."""
        event(
            self.log,
            logging.INFO,
            "consumer-start",
            stream=self._bstream,
            group=self._bgroup,
            consumer=self._bme,
            mode=self.mode,
            min_idle_ms=self.min_idle_ms,
            max_deliveries=self.cfg.max_deliveries,
        )
        failures = 0
        while not self.stopping:
            try:
                self.run_once()
                failures = 0
            except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
                failures += 1
                delay = min(30.0, 0.25 * 2 ** min(failures - 1, 10))
                self.stats.errors["connection"] = self.stats.errors.get("connection", 0) + 1
                if self.metrics is not None:
                    self.metrics.error("connection")
                event(
                    self.log, logging.WARNING, "redis-unavailable", error=str(err), retry_in_s=delay
                )
                self._stop.wait(delay)
        event(self.log, logging.INFO, "consumer-stopped", **self._stat_fields())

    def run_once(self) -> int:
        """One iteration; returns how many entries it delivered to the handler."""
        self.stats.iterations += 1
        if self.mode == "claim":
            try:
                taken = self._claim_read()
            except rex.ResponseError as err:
                text = str(err).lower()
                if "syntax" not in text and "unknown" not in text and "wrong number" not in text:
                    raise
                # The server has no XREADGROUP ... CLAIM (before 8.4, Valkey): nothing ran.
                event(
                    self.log,
                    logging.INFO,
                    "claim-unsupported",
                    error=str(err),
                    detail="falling back to an XAUTOCLAIM cursor plus XREADGROUP >",
                )
                self.mode = "autoclaim"
                return self.run_once()
            self._maybe_sweep_ghosts()
        else:
            taken = self._autoclaim()
            taken += self._read_new(block=not taken and self._cursor == b"0-0")
        self._maybe_measure()
        return self._deliver(taken)

    # -- the two read paths ----------------------------------------------------------------
    def _claim_read(self) -> list[Taken]:
        args: list[Any] = ["XREADGROUP", "GROUP", self.group, self.consumer, "COUNT", self.count]
        if self.block_ms:
            args += ["BLOCK", self.block_ms]
        args += ["CLAIM", self.min_idle_ms, "STREAMS", self.stream, ">"]
        t0 = time.perf_counter()
        reply = self.raw.execute_command(*args)
        taken = parse_claim_reply(reply)
        if any(not t.new for t in taken):
            self._observe(time.perf_counter() - t0)
        return taken

    def _autoclaim(self) -> list[Taken]:
        now = time.monotonic()
        if self._cursor == b"0-0" and now < self._next_sweep:
            return []
        t0 = time.perf_counter()
        reply = self.raw.execute_command(
            "XAUTOCLAIM",
            self.stream,
            self.group,
            self.consumer,
            self.min_idle_ms,
            self._cursor,
            "COUNT",
            self.count,
        )
        self._cursor = _text(reply[0])
        if self._cursor == b"0-0":
            self._next_sweep = now + self.sweep_interval_s
        for deleted in reply[2] if len(reply) > 2 else ():
            self._ghost(_text(deleted))
        entries = [e for e in reply[1] if e]
        live = [e for e in entries if e[1] is not None]
        for e in entries:
            if e[1] is None:  # Redis 6.2: a deleted entry, still in our PEL now
                self.raw.execute_command("XACK", self.stream, self.group, e[0])
                self._ghost(_text(e[0]))
        if not live:
            self._observe(time.perf_counter() - t0)
            return []
        ids = [e[0] for e in live]
        rows = self.raw.execute_command(
            "XPENDING", self.stream, self.group, ids[0], ids[-1], len(ids) + 100, self.consumer
        )
        counts = {_text(r[0]): int(r[3]) for r in rows}
        self._observe(time.perf_counter() - t0)
        out = []
        for entry_id, flat in live:
            # XAUTOCLAIM counted this delivery already: times delivered before = count - 1.
            before = max(counts.get(_text(entry_id), 1) - 1, 0)
            out.append(Taken(_text(entry_id), before, self.min_idle_ms, list(flat)))
        return out

    def _read_new(self, block: bool) -> list[Taken]:
        args: list[Any] = ["XREADGROUP", "GROUP", self.group, self.consumer, "COUNT", self.count]
        if block and self.block_ms:
            wait = self.block_ms
            if self._next_sweep:
                wait = min(wait, max(1, int((self._next_sweep - time.monotonic()) * 1000)))
            args += ["BLOCK", wait]
        args += ["STREAMS", self.stream, ">"]
        reply = self.raw.execute_command(*args)
        out = []
        for t in parse_claim_reply(reply):
            t.new = True
            out.append(t)
        return out

    # -- handling ----------------------------------------------------------------------------
    def _deliver(self, taken: list[Taken]) -> int:
        delivered = 0
        over: list[Taken] = []
        ghosts: list[bytes] = []
        for t in taken:
            if not t.new:
                self.stats.reclaimed += 1
                if self.metrics is not None:
                    self.metrics.add(self._bstream, self._bgroup, "claimed")
            if t.deleted:
                ghosts.append(t.id)
            elif not t.new and self.cfg.over_limit(t.deliveries):
                over.append(t)
        if ghosts:
            self.raw.execute_command("XACK", self.stream, self.group, *ghosts)
            for entry_id in ghosts:
                self._ghost(entry_id)
        if over:
            self._settler.taken(self._bme, over)
        skip = {t.id for t in over}
        done: list[bytes] = []  # handled, not acknowledged yet
        due = 0.0
        for t in taken:  # the whole batch in hand, even when stopping (each was delivered)
            if t.deleted or t.id in skip:
                continue
            delivered += 1
            if self._handle(t):
                if not done:
                    due = time.monotonic() + self._ack_within_s
                done.append(t.id)
            if done and time.monotonic() >= due:
                self._ack(done)
                done = []
        if done:
            self._ack(done)
        return delivered

    def _handle(self, t: Taken) -> bool:
        """Call the handler; True when it returned (the entry is then acknowledged)."""
        flat = t.fields or []
        message = Message(
            stream=self.stream,
            id=t.id.decode() if self._decode else t.id,
            fields=pairs(flat),
            delivery=t.deliveries + 1,
            claimed=not t.new,
            idle_ms=t.idle_ms,
        )
        try:
            self.handler(message)
        except Exception as err:  # noqa: BLE001 - the entry stays pending and is retried
            self.stats.failed += 1
            if self.metrics is not None:
                self.metrics.add(self._bstream, self._bgroup, "failed")
            event(
                self.log,
                logging.WARNING,
                "handler-failed",
                stream=self._bstream,
                id=t.id,
                delivery=message.delivery,
                max_deliveries=self.cfg.max_deliveries,
                error=f"{type(err).__name__}: {err}",
            )
            return False
        return True

    def _ack(self, ids: list[bytes]) -> None:
        """One XACK for entries whose handler returned. XACK counts the entries it removed
        from the PEL: the others were reclaimed by another worker while ours worked, and
        acknowledged there first."""
        acked = int(self.raw.execute_command("XACK", self.stream, self.group, *ids))
        self.stats.handled += len(ids)
        duplicates = len(ids) - acked
        if duplicates:
            self.stats.duplicate_acks += duplicates
            if self.metrics is not None:
                self.metrics.add(self._bstream, self._bgroup, "duplicate_acks", duplicates)

    def _record(self, item: ItemResult, _idle_ms: int) -> None:
        """Outcome of a dead-letter move (the repair scripts' per-entry answer)."""
        if item.outcome == "dlq":
            self.stats.dead_lettered += 1
            field_name = "dead_lettered"
        elif item.outcome == "ghost":
            self.stats.ghosts += 1
            field_name = "ghosts"
        elif item.outcome in (
            "not-pending",
            "owner-changed",
            "redelivered",
            "not-idle",
            "dlq-duplicate",
        ):
            self.stats.duplicate_acks += 1
            field_name = "duplicate_acks"
        else:
            self.stats.errors["dlq"] = self.stats.errors.get("dlq", 0) + 1
            field_name = "failed"
        if self.metrics is not None:
            self.metrics.add(self._bstream, self._bgroup, field_name)
        level = logging.WARNING if item.outcome == "dlq" else logging.ERROR
        if item.outcome not in ("dlq", "ghost") and field_name == "failed":
            event(
                self.log, level, "dlq-failed", id=item.id, outcome=item.outcome, detail=item.detail
            )
        elif item.outcome == "dlq":
            event(
                self.log,
                level,
                "dead-lettered",
                stream=self._bstream,
                id=item.id,
                dlq=self.cfg.dlq_for(self._bstream),
                dlq_id=item.detail,
                reason=self.cfg.dlq_reason,
            )

    def _ghost(self, entry_id: bytes) -> None:
        self.stats.ghosts += 1
        if self.metrics is not None:
            self.metrics.add(self._bstream, self._bgroup, "ghosts")

    # -- housekeeping ------------------------------------------------------------------------
    def _maybe_sweep_ghosts(self) -> None:
        """CLAIM mode: the ghost sweep, one bounded XAUTOCLAIM call at a time (at most COUNT
        x 10 PEL entries examined), its cursor kept. A round over the whole PEL starts every
        ``sweep_interval``; within a round the calls are spread (one every twentieth of the
        interval), so the housekeeping never doubles the cost of a busy loop's reads."""
        now = time.monotonic()
        if now < self._next_sweep:
            return
        try:
            reply = self.raw.execute_command(
                "XAUTOCLAIM",
                self.stream,
                self.group,
                GHOST_SWEEPER,
                NEVER_IDLE,
                self._sweep_cursor,
                "COUNT",
                GHOST_SWEEP_COUNT,
                "JUSTID",
            )
        except rex.ResponseError:
            self._next_sweep = now + 60  # no XAUTOCLAIM here: try again later
            return
        # From Redis 7.2 XAUTOCLAIM creates its consumer even when it claims nothing: delete
        # it again (atomically with the check that it holds nothing), so no consumer of
        # pelctl's stays in the worker's group.
        release_sweeper(self._conn, self._bstream, self._bgroup)
        self._sweep_cursor = _text(reply[0])
        for deleted in reply[2] if len(reply) > 2 else ():
            self._ghost(_text(deleted))
        done = self._sweep_cursor == b"0-0"
        self._next_sweep = now + self.sweep_interval_s / (1 if done else 20)

    def _maybe_measure(self) -> None:
        if self.metrics is None:
            return
        now = time.monotonic()
        if now < self._next_measure:
            return
        self._next_measure = now + self.sweep_interval_s
        try:
            groups = self.raw.execute_command("XINFO", "GROUPS", self.stream)
            head = self.raw.execute_command("XPENDING", self.stream, self.group, "-", "+", 1)
        except rex.ResponseError:
            return
        depth = None
        for flat in groups:  # RESP2: flat pairs; RESP3: a map
            items = flat.items() if isinstance(flat, dict) else field_pairs(flat)
            info = {_text(k): v for k, v in items}
            if _text(info.get(b"name", b"")) == self._bgroup:
                depth = int(info[b"pending"])
        from pelctl.base.binary import escape

        labels = (escape(self._bstream), escape(self._bgroup))
        if depth is not None:
            self.metrics.depth.labels(*labels).set(depth)
        self.metrics.oldest_idle.labels(*labels).set(int(head[0][2]) / 1000 if head else 0)

    def _observe(self, seconds: float) -> None:
        if self.metrics is not None:
            from pelctl.base.binary import escape

            self.metrics.duration.labels(escape(self._bstream), escape(self._bgroup)).observe(
                seconds
            )

    def _stat_fields(self) -> dict[str, Any]:
        s = self.stats
        return {
            "handled": s.handled,
            "failed": s.failed,
            "reclaimed": s.reclaimed,
            "dead_lettered": s.dead_lettered,
            "duplicate_acks": s.duplicate_acks,
            "ghosts": s.ghosts,
        }


__all__ = ["ConsumerStats", "Message", "ReliableConsumer"]
