"""Lua scripts: loading, EVALSHA with a NOSCRIPT fallback, batching and pipelining, slots.

Every per-entry repair runs in one of the scripts in ``pelctl/redis/lua/`` (each is sent
with ``_prelude.lua`` prepended). Scripts are called by SHA1; a server that does not know
the script yet answers ``NOSCRIPT`` and nothing ran, so pelctl loads it and sends the same
call again. Batches of entries go in one script call each, several calls per round trip.

What other clients wait (:class:`Pacer`): Redis reads what a client sent and runs every
complete command in it before it serves the next client, so all the script calls pelctl has
on the wire at once run back to back, one stall for everyone else. The stall, not each call,
is bounded: a round of calls is sized from the measured cost of its script so that the
rounds out at once (one under a bound: the repairs build the next while it runs) stay under
``max_stall_ms`` (10 ms, the bound of ``--max-server-ms``),
aiming at a fraction of it so another client's p99 latency stays under 5 ms
(docs/server-budget.md).

Cluster rule: all keys of one script must hash to one slot. :func:`same_slot` applies the
hash-tag rules of the Redis Cluster specification (CRC16/XMODEM of the tag, modulo 16384).
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import redis
import redis.exceptions as rex
from hiredis import pack_command  # a dependency (pyproject.toml)
from redis.connection import AbstractConnection, SSLConnection

from pelctl.redis.meter import record

# Entries per script call, at most: one call stays a few milliseconds of server time (a
# requeue costs 20-50 µs an entry, mostly finding the entry in its listpack), well under the
# 10 ms bound. The :class:`Pacer` makes calls smaller when their script costs more.
DEFAULT_BATCH = 100
# Script calls per round trip, at most (:func:`round_trip` sends fewer when they cost more).
DEFAULT_DEPTH = 16
# Script calls per round when rounds are sent ahead (:class:`Wire`), at most: the next round
# is ready while the server runs one, so the server has it as soon as it answers and runs it
# while Python parses the last (smaller rounds: finer overlap, fewer calls in doubt when a
# connection drops).
AHEAD_DEPTH = 4
# The stall another client may wait behind pelctl's calls on the wire: the meaning of
# ``--max-server-ms`` (the scan engine's bound on each call) for a whole pipeline.
DEFAULT_MAX_STALL_MS = 10.0
# Aim at this fraction of the bound (2 ms at the default): estimates are upper bounds learnt
# as the run goes, and a client arriving during a stall waits for the rest of it. Measured on
# a 1,000,000-entry requeue (benchmarks' server-budget case): at 0.2 another client's p99 is
# about 3 ms and the throughput that of rounds sent back to back; at 0.3, a p99 of 4.4-5.2 ms
# and no faster (each round's answer comes later, the next is built later).
STALL_TARGET_FRACTION = 0.2
# Until a script's cost is measured: an entry costs this much (the high end of what entry
# scripts cost), a call of unknown size half the per-call bound (it is sent alone).
FIRST_ENTRY_US = 50.0
FIRST_CALL_MS = DEFAULT_MAX_STALL_MS / 2
MIN_BATCH = 10
# The learnt cost: the median of the last few rounds measured.
_SAMPLES = 5
# The most values a script can pass to one command (Lua 5.1's unpack(): LUAI_MAXCSTACK - 1;
# "too many results to unpack" beyond). Measured on redis-server 7.0.15 and valkey-server
# 8.0.1 (tests/integration/test_wide_entries.py finds it on the server); ``_prelude.lua``
# holds the same number as UNPACK_MAX. An XADD needing more values (an entry of about 4,000
# fields) cannot be written by a script: such entries take the ordered path.
LUA_UNPACK_MAX = 7_999

_PRELUDE = "_prelude.lua"


def xadd_fits(values: int) -> bool:
    """Whether an XADD of ``values`` arguments after the command name (key, options, ``*``,
    fields and values) can be sent from a script."""
    return values <= LUA_UNPACK_MAX


@dataclass(frozen=True)
class Script:
    name: str
    source: bytes
    sha: str

    def call(self, client: redis.Redis, keys: Sequence[object], args: Sequence[object]) -> object:
        """One EVALSHA; on NOSCRIPT load the script and call again (nothing ran the first time)."""
        try:
            return client.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)
        except rex.NoScriptError:
            self.load(client)
            return client.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)

    def load(self, client: redis.Redis) -> None:
        self._check(client.execute_command("SCRIPT", "LOAD", self.source))

    def load_on(self, conn: AbstractConnection) -> None:
        """``SCRIPT LOAD`` on one connection of a pool (:class:`Wire`)."""
        conn.send_command("SCRIPT", "LOAD", self.source)
        self._check(conn.read_response())

    def _check(self, sha: object) -> None:
        if isinstance(sha, bytes):
            sha = sha.decode()
        if sha != self.sha:  # pragma: no cover - would mean a different SHA1 on the server
            raise RuntimeError(f"script {self.name}: server SHA {sha} != {self.sha}")


@cache
def script(name: str) -> Script:
    """The script ``pelctl/redis/lua/<name>.lua`` with the shared prelude (cached)."""
    lua = resources.files("pelctl.redis") / "lua"
    body = (lua / f"{name}.lua").read_bytes()
    source = body if name.startswith("_") else (lua / _PRELUDE).read_bytes() + b"\n" + body
    return Script(name, source, hashlib.sha1(source).hexdigest())


@dataclass(frozen=True)
class Call:
    """One script call of a pipelined run; ``tag`` is the caller's (e.g. the batch);
    ``entries``: how many entries it works on (its cost grows with them), None when the
    call itself is the unit of cost."""

    script: Script
    keys: tuple[object, ...]
    args: tuple[object, ...]
    tag: object = None
    entries: int | None = None


@dataclass
class PaceStats:
    """What a :class:`Pacer` did: rounds sent and the largest one, by its own estimate."""

    rounds: int = 0
    calls: int = 0
    max_round_calls: int = 0
    max_round_ms: float = 0.0  # estimated server time of the dearest round
    max_stall_ms: float = 0.0  # estimated server time of everything out at once, at most


class Pacer:
    """Sizes script calls and rounds so what pelctl has on the wire at once stays under
    ``max_stall_ms`` of server time (aiming at :data:`STALL_TARGET_FRACTION` of it).

    Costs are learnt per script (per entry when calls say how many entries they hold, else
    per call) from rounds sent alone (:meth:`learn`): a round trip minus the idle latency
    is an upper bound of the server's time. Until a script is measured its cost is assumed
    high (:data:`FIRST_ENTRY_US`, :data:`FIRST_CALL_MS`), so the first round is small.
    ``rounds_out``: rounds on the wire at once (2 for :class:`Wire`, 1 for
    :func:`round_trip`): each round aims at the target, and all of them together stay under
    the bound. ``max_batch``/``max_depth`` cap calls and rounds at the sizes used before the
    bound existed (a server that is fast only makes rounds as big as they always were)."""

    def __init__(
        self,
        max_stall_ms: float = DEFAULT_MAX_STALL_MS,
        *,
        max_batch: int = DEFAULT_BATCH,
        max_depth: int = AHEAD_DEPTH,
        rounds_out: int = 2,
    ) -> None:
        if not max_stall_ms > 0:
            raise ValueError("max_stall_ms must be more than 0")
        self.max_stall_ms = max_stall_ms
        self.max_batch = max(1, max_batch)
        self.max_depth = max(1, max_depth)
        self.rounds_out = max(1, rounds_out)
        self.latency_ms = 0.0
        self.stats = PaceStats()
        self._cost_ms: dict[tuple[str, bool], float] = {}  # per entry (True) or per call
        self._samples: dict[tuple[str, bool], deque[float]] = {}

    @property
    def target_ms(self) -> float:
        return self.max_stall_ms * STALL_TARGET_FRACTION

    @property
    def round_ms(self) -> float:
        """What one round may cost: the target, so long as every round out at once still
        fits the bound. (Rounds sent ahead reach the server one by one, each while the one
        before runs, so the stall is usually one round; the bound holds for all of them.)"""
        return min(self.target_ms, self.max_stall_ms / self.rounds_out)

    # -- estimates -----------------------------------------------------------------------------
    def unit_ms(self, script: Script | None, per_entry: bool = True) -> float:
        """The learnt cost of one entry (or one call) of ``script``; until it is measured
        (or with no script named), the high first guess."""
        first = FIRST_ENTRY_US / 1000.0 if per_entry else FIRST_CALL_MS
        if script is None:
            return first
        return self._cost_ms.get((script.name, per_entry), first)

    def cost_ms(self, call: Call) -> float:
        if call.entries is None:
            return self.unit_ms(call.script, per_entry=False)
        return self.unit_ms(call.script) * max(call.entries, 1)

    def batch(self, script: Script | None, cap: int | None = None) -> int:
        """Entries per call of ``script``: as many as one round's share of the target holds
        (at least :data:`MIN_BATCH`, at most ``cap`` or ``max_batch``)."""
        most = min(cap or self.max_batch, self.max_batch)
        fits = int(min(self.round_ms / max(self.unit_ms(script), 1e-6), most))
        return max(min(MIN_BATCH, most), min(most, fits))

    def fit(self, calls: Sequence[Call]) -> int:
        """How many of ``calls``, from the first, go in one round (at least one)."""
        total, n = 0.0, 0
        for call in calls[: self.max_depth]:
            total += self.cost_ms(call)
            if n and total > self.round_ms:
                break
            n += 1
        return max(n, 1)

    def split(self, calls: Sequence[Call]) -> list[Sequence[Call]]:
        """``calls`` cut into rounds (:meth:`fit`), in order."""
        rounds: list[Sequence[Call]] = []
        i = 0
        while i < len(calls):
            n = self.fit(calls[i:])
            rounds.append(calls[i : i + n])
            i += n
        return rounds

    # -- learning ------------------------------------------------------------------------------
    def sent(self, calls: Sequence[Call], out_ms: float = 0.0) -> float:
        """A round went out; ``out_ms``: the estimated cost of the rounds still out before it.
        Returns the round's estimated cost."""
        est = sum(self.cost_ms(c) for c in calls)
        st = self.stats
        st.rounds += 1
        st.calls += len(calls)
        st.max_round_calls = max(st.max_round_calls, len(calls))
        st.max_round_ms = max(st.max_round_ms, est)
        st.max_stall_ms = max(st.max_stall_ms, est + out_ms)
        return est

    def learn(self, calls: Sequence[Call], server_ms: float) -> None:
        """A round of ``calls`` took ``server_ms`` (an upper bound): its scripts' costs.

        The cost kept is the median of the last :data:`_SAMPLES` rounds measured: a round
        trip is never shorter than the server's time, but a busy machine makes some much
        longer (a process waiting for a CPU), and one such round must not halve the next
        ones."""
        by_key: dict[tuple[str, bool], float] = {}
        for call in calls:
            per_entry = call.entries is not None
            key = (call.script.name, per_entry)
            by_key[key] = by_key.get(key, 0.0) + (max(call.entries or 1, 1) if per_entry else 1)
        units = sum(by_key.values())
        if not units:
            return
        unit = server_ms / units  # one script per round in practice: shared evenly otherwise
        for key in by_key:
            samples = self._samples.setdefault(key, deque(maxlen=_SAMPLES))
            samples.append(unit)
            ordered = sorted(samples)
            self._cost_ms[key] = ordered[len(ordered) // 2]

    def note_latency(self, rtt_ms: float) -> None:
        self.latency_ms = rtt_ms if not self.latency_ms else min(self.latency_ms, rtt_ms)


def round_trip(
    client: redis.Redis, calls: Sequence[Call], *, pacer: Pacer | None = None
) -> list[object]:
    """Send ``calls`` in pipelines, one round trip after the other; return one reply per
    call, in order. Each pipeline holds as many calls as the stall bound allows
    (:class:`Pacer`: one at first, until the script's cost is measured; give the same
    ``pacer`` to every call of a run to keep what it learnt).

    A reply is the script's answer or the error the server returned for that call
    (``redis.exceptions.ResponseError``). ``NOSCRIPT`` answers are sent again after loading
    the script: a script the server did not know did not run. Connection errors raise:
    the calls of the round trip in flight may or may not have run, those before it ran.
    """
    pacer = pacer or Pacer(rounds_out=1, max_depth=DEFAULT_DEPTH)
    replies: list[object] = []
    i = 0
    while i < len(calls):
        n = pacer.fit(calls[i:])
        part = calls[i : i + n]
        pacer.sent(part)
        t0 = time.perf_counter()
        got = _send(client, part)
        rtt_ms = (time.perf_counter() - t0) * 1000.0
        missing = [j for j, reply in enumerate(got) if isinstance(reply, rex.NoScriptError)]
        if missing:
            for s in {part[j].script for j in missing}:
                s.load(client)
            again = _send(client, [part[j] for j in missing])
            for j, reply in zip(missing, again, strict=True):
                got[j] = reply
        else:
            server_ms = rtt_ms - min(pacer.latency_ms, rtt_ms / 2)
            pacer.learn(part, server_ms)
            record(server_ms, len(part))
        replies += got
        i += n
    return replies


def _send(client: redis.Redis, calls: Sequence[Call]) -> list[object]:
    pipe = client.pipeline(transaction=False)
    for c in calls:
        pipe.execute_command("EVALSHA", c.script.sha, len(c.keys), *c.keys, *c.args)
    return list(pipe.execute(raise_on_error=False))


class Wire:
    """Rounds of script calls sent ahead on one pooled connection, so the server runs a round
        while Python builds the next one and reads the answers of the last: the
    whole process waits for the server, not for a round trip after every round.

        :meth:`send` puts a round on the wire and returns at once; :meth:`receive` reads the
        answers of the oldest round still out (rounds are answered in the order they were
        sent), each the script's reply or the error the server returned for that call. A call
        answered ``NOSCRIPT`` did not run: the rounds still out are read first, then the script
        is loaded and the call sent again (the answers keep their places).

        Connection errors raise (the rounds still out may or may not have run: the caller
        treats them as unknown); the connection is then dropped, never handed back half-read.
        Use as a context manager: :meth:`close` returns the connection to its pool, or drops it
        when answers are still unread (an interrupt)."""

    def __init__(self, client: redis.Redis, pacer: Pacer | None = None) -> None:
        self.pool = client.connection_pool
        self.conn = self.pool.get_connection()
        self.closed = False
        self.out: deque[Sequence[Call]] = deque()
        self.early: deque[list[object]] = deque()  # answers read ahead (NOSCRIPT recovery)
        # What the rounds' times teach: ``pacer`` learns each round's cost; the current
        # meter counts it (pelctl.redis.meter).
        self.pacer = pacer
        self._sent_at: deque[tuple[float, bool]] = deque()  # (when, alone on the wire)
        self._estimates: deque[float] = deque()  # the rounds out: their cost, estimated

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def rounds_out(self) -> int:
        return len(self.out)

    def send(
        self, calls: Sequence[Call], *, alone: bool | None = None, packed: list[bytes] | None = None
    ) -> None:
        """Put a round on the wire. ``alone``: whether it is alone on the server, so that its
        round trip measures its cost: by default when no other round is out; True too for a
        round sent once the answers of those out have started to arrive (:meth:`answering`);
        False for a round sent while another runs. ``packed``: the round as :func:`pack` made
        it ahead of time."""
        if alone is None:
            alone = not self.out
        if self.pacer is not None:
            # The rounds out, as estimated when sent (none on the server when this one goes
            # alone: they are answered, their answers not yet read).
            ahead = 0.0 if alone else sum(self._estimates)
            self._estimates.append(self.pacer.sent(calls, ahead))
        self.out.append(calls)
        self.conn.send_packed_command(packed if packed is not None else pack(calls))
        self._sent_at.append((time.perf_counter(), alone))

    def latency(self) -> float:
        """The connection's idle round trip (a ``PING``, best of three), for the pacer. Only
        with no round out."""
        best = None
        for _ in range(3):
            t0 = time.perf_counter()
            self.conn.send_command("PING")
            self.conn.read_response()
            rtt = (time.perf_counter() - t0) * 1000.0
            best = rtt if best is None else min(best, rtt)
        if self.pacer is not None and best is not None:
            self.pacer.note_latency(best)
        return best or 0.0

    def answering(self) -> None:
        """Wait until the answers of the oldest round out start to arrive: the server has run
        it and holds nothing more of ours, so a round sent now is alone on it and starts at
        once (the read that follows raises if the socket's timeout passes first). A round
        larger than what the server reads at once (16 kB) is answered in parts: the next one
        may then queue behind its last calls, two rounds within the bound."""
        # (Not over TLS: a socket's readiness says nothing of what the TLS layer holds.)
        if self.out and not self.early and not isinstance(self.conn, SSLConnection):
            # (No socket timeout: the read that follows waits as long as it must.)
            self.conn.can_read(timeout=float(self.conn.socket_timeout or 60.0))

    def _timed(self, calls: Sequence[Call]) -> None:
        """A round's answers are in. Sent alone (no other round out), its round trip minus
        the idle latency bounds the server's time for it: the pacer learns the script's
        cost from it. A round sent ahead is counted at the learnt cost (the time between
        two rounds' answers is the client's as much as the server's: learning from it, a
        busy client would shrink the rounds it is already too slow for)."""
        now = time.perf_counter()
        sent, alone = self._sent_at.popleft()
        if self._estimates:
            self._estimates.popleft()
        pacer = self.pacer
        if alone:
            rtt_ms = (now - sent) * 1000.0
            # (At most half the round trip is taken for latency: a PING slowed by a busy
            # machine must not make the script look cheap.)
            latency = min(pacer.latency_ms if pacer else 0.0, rtt_ms / 2)
            server_ms = rtt_ms - latency
            if pacer is not None:
                pacer.learn(calls, server_ms)
        elif pacer is not None:
            server_ms = sum(pacer.cost_ms(c) for c in calls)
        else:
            server_ms = (now - sent) * 1000.0
        record(server_ms, len(calls))

    def _read(self, n: int) -> list[object]:
        replies: list[object] = []
        for _ in range(n):
            try:
                replies.append(self.conn.read_response())
            except rex.ResponseError as err:  # the server's answer to that call
                replies.append(err)
        return replies

    def receive(self) -> list[object]:
        """The answers of the oldest round still out, in order."""
        calls = self.out.popleft()
        early = bool(self.early)
        replies = self.early.popleft() if early else self._read(len(calls))
        if self._sent_at:
            if early:  # read ahead during a NOSCRIPT recovery: its time is not known
                self._sent_at.popleft()
                if self._estimates:
                    self._estimates.popleft()
            else:
                self._timed(calls)
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, rex.NoScriptError)]
        if missing:
            # Read what is still out first: the reload and resend must not be answered
            # before the rounds ahead of them.
            while len(self.early) < len(self.out):
                self.early.append(self._read(len(self.out[len(self.early)])))
            for s in {calls[i].script for i in missing}:
                s.load_on(self.conn)
            again = [calls[i] for i in missing]
            self.conn.send_packed_command(pack(again))
            for i, reply in zip(missing, self._read(len(again)), strict=True):
                replies[i] = reply
        return replies

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.out and len(self.early) < len(self.out):
            self.conn.disconnect()  # answers still unread: never reuse it
        self.pool.release(self.conn)


def pack(calls: Sequence[Call]) -> list[bytes]:
    """The EVALSHA commands of ``calls`` in RESP. The arguments of script calls are bytes,
    str and int: hiredis packs them as they are (redis-py's packer would first look at each
    of a round's thousands of arguments in Python)."""
    commands = [("EVALSHA", c.script.sha, len(c.keys), *c.keys, *c.args) for c in calls]
    # hiredis's stub types the argument as a 1-tuple; it takes a tuple of any length.
    return [b"".join([pack_command(command) for command in commands])]  # type: ignore[arg-type]


# -- cluster slots ---------------------------------------------------------------------------

SLOTS = 16384


def _crc16_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC16 = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC16/XMODEM, as Redis Cluster uses (``crc16(b"123456789") == 0x31C3``)."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[((crc >> 8) ^ byte) & 0xFF]
    return crc


def hash_tag(key: bytes) -> bytes:
    """The part of ``key`` that is hashed: the first non-empty ``{...}``, else the whole key."""
    start = key.find(b"{")
    if start != -1:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            return key[start + 1 : end]
    return key


def key_slot(key: bytes | str) -> int:
    if isinstance(key, str):
        key = key.encode()
    return crc16(hash_tag(key)) % SLOTS


def same_slot(*keys: bytes | str) -> bool:
    """Whether every key hashes to one cluster slot (so one script may touch them all)."""
    return len({key_slot(k) for k in keys}) <= 1
