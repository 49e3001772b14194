"""The refresh's pipelined reads: each group's work (:class:`GroupWork`), what it carries to
the next refresh (:class:`Memory`), its calls, and the batches they are sent in, cut by
their estimated server time. Also the probes counted as round trips of the refresh, and the
streams grouped by the node that owns them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis

from pelctl.base.binary import escape
from pelctl.core.ghosts import StreamBounds
from pelctl.core.liveness.verdict import Clients, ClientsProbe, ConsumerFacts, LockProbe
from pelctl.core.models import IdleCounts
from pelctl.core.monitor.model import Problem
from pelctl.core.monitor.status import Window
from pelctl.core.trim import StreamFacts
from pelctl.redis.connection import Connection
from pelctl.redis.errors import translate
from pelctl.redis.meter import timed
from pelctl.redis.replies import rows

# A PEL this small is read whole by one XPENDING inside the refresh's pipelines.
WHOLE_READ = 1_000
# Share of --max-server-ms one pipeline's estimated server time may take.
PIPELINE_SHARE = 0.3
# Estimated server time (µs): a small command, a PEL row, a consumer listed.
_CALL_US, _ROW_US, _CONSUMER_US = 4.0, 0.5, 1.0


@dataclass
class Memory:
    """What a group's next refresh needs from this one."""

    window: Window
    health: IdleCounts | None = None
    ghosts: int | None = None
    walked_ms: int | None = None
    kept: list[bytes] = field(default_factory=list)  # longest idle first
    # Every pending entry not in ``kept`` was delivered at or after this (wall ms).
    cutoff_ms: int | None = None
    touched: int = 0  # the refresh that last saw the group


@dataclass
class GroupWork:
    """One group's work within a refresh."""

    stream: bytes
    row: dict[bytes, Any]
    bounds: StreamBounds
    facts: StreamFacts  # the stream's XINFO STREAM: what a trim removed before it was read
    memory: Memory
    walk: bool = False
    whole: bool = False
    summary: Any = None
    consumer_rows: list[dict[bytes, Any]] = field(default_factory=list)
    after: Any = None  # XRANGE past the last-delivered id
    lowest: Any = None  # XPENDING - + 1
    pel_rows: Any = None  # the whole PEL (WHOLE_READ + 1 rows at most)
    sent_ms: int = 0  # wall time the pipeline holding its calls was sent
    probes: list[Any] = field(default_factory=list)  # XPENDING id id 1 per kept id

    @property
    def name(self) -> bytes:
        return bytes(self.row[b"name"])

    @property
    def pending(self) -> int:
        return int(self.row[b"pending"])

    @property
    def lag(self) -> int | None:
        lag = self.row.get(b"lag")
        return int(lag) if lag is not None else None


def run_batches(
    node: redis.Redis, work: list[GroupWork], limit_us: float, now_ms: Callable[[], int]
) -> None:
    """The pipelined calls of every group, in batches of at most ``limit_us`` of estimated
    server time."""
    batch: list[tuple[GroupWork, str, list[object]]] = []
    cost = 0.0
    for g in work:
        calls = group_calls(g)
        est = sum(_cost(g, what) for what, _args in calls)
        if batch and cost + est > limit_us:
            _run(node, batch, now_ms())
            batch, cost = [], 0.0
        batch.extend((g, what, args) for what, args in calls)
        cost += est
    if batch:
        _run(node, batch, now_ms())


def group_calls(g: GroupWork) -> list[tuple[str, list[object]]]:
    """One group's calls in the pipelines of a refresh."""
    s, name = g.stream, g.name
    calls: list[tuple[str, list[object]]] = []
    if g.pending:
        if not g.whole:  # (read whole, the PEL gives its lowest id itself)
            calls.append(("summary", ["XPENDING", s, name]))
        if not g.whole:
            calls.append(("lowest", ["XPENDING", s, name, "-", "+", 1]))
    if int(g.row[b"consumers"]):
        calls.append(("consumers", ["XINFO", "CONSUMERS", s, name]))
    if g.lag != 0:
        after = b"(" + g.row[b"last-delivered-id"]
        calls.append(("after", ["XRANGE", s, after, "+", "COUNT", 1]))
    if g.whole:
        calls.append(("pel", ["XPENDING", s, name, "-", "+", WHOLE_READ + 1]))
    elif not g.walk:
        for entry_id in g.memory.kept:
            calls.append(("probe", ["XPENDING", s, name, entry_id, entry_id, 1]))
    return calls


def timed_probe(probe: ClientsProbe) -> ClientsProbe:
    """``CLIENT LIST`` counted as one round trip of the refresh."""

    def timed_probe() -> Clients:
        with timed(1):
            return probe()

    return timed_probe


def timed_locks(probe: LockProbe) -> LockProbe:
    """The lock keys' pipeline counted as one round trip (or two) of the refresh."""

    def timed_probe(consumers: Sequence[ConsumerFacts]) -> set[bytes]:
        with timed(2):
            return probe(consumers)

    return timed_probe


def streams_by_node(conn: Connection, match: bytes | None) -> list[tuple[redis.Redis, list[bytes]]]:
    """Every stream key, grouped by the node that owns it (one SCAN pass per primary)."""
    order: list[redis.Redis] = []
    keys: dict[int, list[bytes]] = {}
    for node, found in conn.scan_stream_pages(match):
        if id(node) not in keys:
            order.append(node)
            keys[id(node)] = []
        keys[id(node)].extend(found)
    # SCAN may return a key twice
    return [(node, list(dict.fromkeys(keys[id(node)]))) for node in order]


def failure(key: bytes, reply: object, problems: list[Problem]) -> bool:
    """An error reply of one stream's call: a key gone or retyped since SCAN is skipped, a
    key the ACL hides is skipped and reported; anything else (a command the ACL denies for
    every key, a server fault) raises."""
    if not isinstance(reply, Exception):
        return False
    text = str(reply)
    if text.startswith("WRONGTYPE") or "no such key" in text.lower():
        return True
    denied = isinstance(reply, redis.exceptions.NoPermissionError) or text.startswith("NOPERM")
    if denied and "key" in text.lower() and "access" in text.lower():
        problems.append(Problem("permission", f"{escape(key)}: {text}"))
        return True
    raise translate(reply) if isinstance(reply, redis.RedisError) else reply


def _cost(g: GroupWork, what: str) -> float:
    if what == "pel":
        return _CALL_US + _ROW_US * min(g.pending, WHOLE_READ)
    if what in ("consumers", "summary"):
        return _CALL_US + _CONSUMER_US * int(g.row[b"consumers"])
    return _CALL_US


def _run(
    node: redis.Redis, batch: Sequence[tuple[GroupWork, str, list[object]]], sent_ms: int
) -> None:
    pipe = node.pipeline(transaction=False)
    for g, _what, args in batch:
        pipe.execute_command(*args)
        g.sent_ms = sent_ms
    with timed(1):  # one round trip: its wait, less the idle latency, is the server's
        replies = pipe.execute(raise_on_error=False)
    for (g, what, _args), reply in zip(batch, replies, strict=True):
        if isinstance(reply, Exception):
            text = str(reply)
            if text.startswith("NOGROUP") or "no such key" in text.lower():
                continue  # deleted since XINFO GROUPS: left with what it has
            raise reply
        if what == "summary":
            g.summary = reply
        elif what == "lowest":
            g.lowest = reply
        elif what == "consumers":
            g.consumer_rows = rows(reply)
        elif what == "after":
            g.after = reply
        elif what == "pel":
            g.pel_rows = reply
        else:
            g.probes.append(reply)
