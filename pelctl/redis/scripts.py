"""Lua scripts: loading, EVALSHA with a NOSCRIPT fallback, batching and pipelining, slots.

Every per-entry repair runs in one of the scripts in ``pelctl/redis/lua/`` (each is sent
with ``_prelude.lua`` prepended). Scripts are called by SHA1; a server that does not know
the script yet answers ``NOSCRIPT`` and nothing ran, so pelctl loads it and sends the same
call again. Batches of entries go in one script call each, several calls per round trip.

Cluster rule: all keys of one script must hash to one slot. :func:`same_slot` applies the
hash-tag rules of the Redis Cluster specification (CRC16/XMODEM of the tag, modulo 16384).
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import redis
import redis.exceptions as rex
from hiredis import pack_command  # a dependency (pyproject.toml)
from redis.connection import AbstractConnection

# Entries per script call: one call stays a few milliseconds of server time (a requeue costs
# 20-50 µs an entry, mostly finding the entry in its listpack), well under the 10 ms bound.
DEFAULT_BATCH = 100
# Script calls per round trip.
DEFAULT_DEPTH = 16
# Script calls per round when rounds are sent ahead (:class:`Wire`): two rounds are out, so
# the server always has the next one while Python parses the last (smaller rounds: finer
# overlap, fewer calls in doubt when a connection drops).
AHEAD_DEPTH = 4
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
    """One script call of a pipelined run; ``tag`` is the caller's (e.g. the batch)."""

    script: Script
    keys: tuple[object, ...]
    args: tuple[object, ...]
    tag: object = None


def round_trip(client: redis.Redis, calls: Sequence[Call]) -> list[object]:
    """Send ``calls`` in one pipeline; return one reply per call, in order.

    A reply is the script's answer or the error the server returned for that call
    (``redis.exceptions.ResponseError``). ``NOSCRIPT`` answers are sent again after loading
    the script: a script the server did not know did not run. Connection errors raise:
    the calls of that round trip may or may not have run.
    """
    replies = _send(client, calls)
    missing = [i for i, reply in enumerate(replies) if isinstance(reply, rex.NoScriptError)]
    if missing:
        for s in {calls[i].script for i in missing}:
            s.load(client)
        again = _send(client, [calls[i] for i in missing])
        for i, reply in zip(missing, again, strict=True):
            replies[i] = reply
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

    def __init__(self, client: redis.Redis) -> None:
        self.pool = client.connection_pool
        self.conn = self.pool.get_connection()
        self.closed = False
        self.out: deque[Sequence[Call]] = deque()
        self.early: deque[list[object]] = deque()  # answers read ahead (NOSCRIPT recovery)

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def rounds_out(self) -> int:
        return len(self.out)

    def send(self, calls: Sequence[Call]) -> None:
        self.out.append(calls)
        self.conn.send_packed_command(_pack(calls))

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
        replies = self.early.popleft() if self.early else self._read(len(calls))
        missing = [i for i, reply in enumerate(replies) if isinstance(reply, rex.NoScriptError)]
        if missing:
            # Read what is still out first: the reload and resend must not be answered
            # before the rounds ahead of them.
            while len(self.early) < len(self.out):
                self.early.append(self._read(len(self.out[len(self.early)])))
            for s in {calls[i].script for i in missing}:
                s.load_on(self.conn)
            again = [calls[i] for i in missing]
            self.conn.send_packed_command(_pack(again))
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


def _pack(calls: Sequence[Call]) -> list[bytes]:
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
