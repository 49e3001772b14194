"""A server that runs no scripts, for the tests of pelctl's script-less fallback: fakeredis
with ``EVAL``/``EVALSHA``/``SCRIPT`` answering "unknown command", as some proxies do. No real
Redis can be that (an ACL that denies scripting answers NOPERM, which pelctl reports as an
ACL refusal), so this is the one place fakeredis stands in for a server. It answers as Redis
8.4 (XREADGROUP ... CLAIM included, for ``ReliableConsumer``'s CLAIM mode).

Where fakeredis differs from Redis in a way pelctl's fallback and sweeps hit, the difference
is corrected here, in the test setup, never in pelctl:

- XCLAIM and XAUTOCLAIM (Redis >= 7.0, ``t_stream.c``) drop a PEL entry whose stream entry
  was deleted *before* looking at its idle time: a deleted entry is cleared whatever the
  min-idle. fakeredis 2.40 checks the idle time first;
- the same commands create the claiming consumer only when they claim an entry (Redis 7.0;
  from 7.2 they create it always, and pelctl deletes it again); fakeredis creates it on
  every call.

:func:`redis_claim_rules` puts Redis 7.0's behaviour back for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

LUA_COMMANDS = frozenset(
    {
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "script",
        "function",
        "fcall",
        "fcall_ro",
    }
)


def _no_lua_connection_class() -> type:
    from fakeredis._clients._sync import FakeRedisConnection
    from fakeredis._socket import FakeSocket

    class NoLuaSocket(FakeSocket):
        def _name_to_func(self, cmd_name: str):
            if cmd_name in LUA_COMMANDS:
                raise self._unknown_command(cmd_name)
            return super()._name_to_func(cmd_name)

    class NoLuaConnection(FakeRedisConnection):
        def _connect(self) -> NoLuaSocket:
            sock = super()._connect()
            sock.__class__ = NoLuaSocket
            return sock

    return NoLuaConnection


def redis_claim_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """XCLAIM/XAUTOCLAIM clear deleted entries from the PEL whatever their idle time and
    create the claiming consumer only when they claim something, as Redis >= 7.0 does (see
    the module docstring)."""
    from fakeredis.model._stream import StreamEntryKey, StreamGroup

    original_read = StreamGroup.read_pel_msgs
    original_claim = StreamGroup.claim

    def read_pel_msgs(self, min_idle_ms: int, start: bytes, count: int):
        start_key = StreamEntryKey.parse_str(start)
        ghosts = sorted(k for k in self.pel if k >= start_key and k not in self.stream)
        if not ghosts:
            return original_read(self, min_idle_ms, start, count)
        msgs, _next = original_read(self, min_idle_ms, start, len(self.pel) + 1)
        merged = sorted(set(msgs) | set(ghosts))
        return merged[:count], merged[count] if len(merged) > count else None

    def claim(self, min_idle_ms: int, msgs, consumer_name: bytes, *args, **kwargs):
        deleted = []
        keep = []
        for msg in msgs:
            try:
                key = StreamEntryKey.parse_str(msg) if isinstance(msg, bytes) else msg
            except Exception:  # noqa: BLE001 - left to the original (it skips bad ids)
                keep.append(msg)
                continue
            if key in self.pel and key not in self.stream:
                self._release_pending(self.pel[key].consumer_name)
                del self.pel[key]
                deleted.append(key)
            else:
                keep.append(msg)
        existed = consumer_name in self.consumers
        claimed, removed = original_claim(self, min_idle_ms, keep, consumer_name, *args, **kwargs)
        if not existed and not claimed:
            self.consumers.pop(consumer_name, None)
        return claimed, sorted(set(removed) | set(deleted))

    monkeypatch.setattr(StreamGroup, "read_pel_msgs", read_pel_msgs)
    monkeypatch.setattr(StreamGroup, "claim", claim)


def spy_unscripted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record each call of pelctl's script-less settling (the entries it was given): which
    path a test took is then a fact, not a guess."""
    from pelctl.reclaim import settle

    calls: list[int] = []
    real = settle.settle_unscripted

    def spy(*args, **kwargs):
        calls.append(len(args[-1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(settle, "settle_unscripted", spy)
    return calls


@pytest.fixture
def scriptless(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], object]]:
    """``scriptless()``: a fresh fakeredis server that runs no scripts and answers as Redis
    8.4 (RESP2, bytes)."""
    import fakeredis

    redis_claim_rules(monkeypatch)
    made: list = []

    def build() -> fakeredis.FakeRedis:
        kwargs = {"connection_class": _no_lua_connection_class()}
        server = fakeredis.FakeServer(version=(8, 4))  # its own data, never a shared server
        client = fakeredis.FakeRedis(server=server, version=(8, 4), protocol=2, **kwargs)
        made.append(client)
        return client

    yield build
    for client in made:
        client.close()
