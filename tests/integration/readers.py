"""Consumers that really wait in ``XREADGROUP ... BLOCK`` while holding entries, as framework
workers do, for the liveness tests (Redis 7.0 here, Valkey 8 in tests/topologies).

A :class:`Reader` is a thread with its own connection: it reads ``count`` entries once and
never acknowledges them, then — once ``go`` is set, so that one reader's loop does not take
the entries meant for the next — loops on ``XREADGROUP ... BLOCK block_ms STREAMS s >`` (a
short block like FastStream's polling, or ``block_ms=0``: blocked until an entry comes).
``kill()`` closes its connection from the server side (``CLIENT KILL ID``), which is what
Redis sees when a worker process dies, and waits until the thread is gone.
"""

from __future__ import annotations

import threading

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.waiting import wait_for

DEADLINE_S = 30.0


class Reader(threading.Thread):
    def __init__(
        self,
        port: int,
        stream: bytes,
        group: bytes,
        consumer: bytes,
        *,
        count: int,
        block_ms: int,
        client_name: str | None = None,
        go: threading.Event | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.go = go or threading.Event()
        self.port = port
        self.stream, self.group, self.consumer = stream, group, consumer
        self.count = count
        self.block_ms = block_ms
        self.client_name = client_name
        self.held: list[bytes] = []
        self.reads = 0  # XREADGROUP calls made after the first read
        self.client_id: int | None = None
        self.ready = threading.Event()
        self.stopped = False
        self.error: BaseException | None = None

    def run(self) -> None:
        # No client retries: a killed connection must end the thread, not reconnect.
        c = redis.Redis(
            port=self.port,
            protocol=2,
            client_name=self.client_name,
            socket_timeout=None,
            retry=Retry(NoBackoff(), 0),
        )
        try:
            self.client_id = int(c.client_id())
            got = c.xreadgroup(self.group, self.consumer, {self.stream: ">"}, count=self.count)
            self.held = [entry_id for _s, entries in got for entry_id, _f in entries]
            self.ready.set()
            self.go.wait()
            while not self.stopped:
                c.xreadgroup(
                    self.group, self.consumer, {self.stream: ">"}, count=1, block=self.block_ms
                )
                self.reads += 1
        except redis.ConnectionError:
            pass  # killed
        except BaseException as err:  # noqa: BLE001 - reported by start_holding
            self.error = err
            self.ready.set()
        finally:
            c.close()

    def start_holding(self) -> Reader:
        """Start, and wait until it has read its entries (its loop waits for ``go``)."""
        self.start()
        assert self.ready.wait(DEADLINE_S), "the reader did not read"
        assert self.error is None, self.error
        assert len(self.held) == self.count, self.held
        return self

    def wait_waiting(self) -> None:
        """Wait until it polls (a short BLOCK) or is blocked (BLOCK 0)."""
        assert self.go.is_set()
        if self.block_ms:
            wait_for(lambda: self.reads >= 2, f"{self.consumer!r} to poll")
        else:
            admin = redis.Redis(port=self.port, protocol=2)
            wait_for(lambda: self._blocked(admin), f"{self.consumer!r} to block")
            admin.close()

    def _blocked(self, admin: redis.Redis) -> bool:
        return any(
            int(c["id"]) == self.client_id and "b" in c.get("flags", "")
            for c in admin.client_list()
        )

    def kill(self) -> None:
        self.stopped = True
        self.go.set()
        admin = redis.Redis(port=self.port, protocol=2)
        try:
            if self.client_id is not None:
                admin.client_kill_filter(_id=self.client_id)
        except redis.ResponseError:
            pass  # already gone
        finally:
            admin.close()
        self.join(DEADLINE_S)
        assert not self.is_alive()


class Readers:
    """Readers of one stream and group: ``start`` each (it adds and reads its entries), then
    ``go()`` (they wait in XREADGROUP; nobody reads before, so no loop takes the entries
    meant for the next reader); ``kill_all`` at the end."""

    def __init__(self, port: int, stream: bytes, group: bytes) -> None:
        self.port, self.stream, self.group = port, stream, group
        self.started: list[Reader] = []

    def start(
        self, consumer: bytes, *, count: int, block_ms: int, name: str | None = None
    ) -> Reader:
        """Add ``count`` entries and start a reader that takes them (nobody else reads
        before ``go()``)."""
        admin = redis.Redis(port=self.port, protocol=2)
        try:
            for n in range(count):
                admin.xadd(self.stream, {b"job": f"{consumer!r}-{n}".encode()})
        finally:
            admin.close()
        reader = Reader(
            self.port,
            self.stream,
            self.group,
            consumer,
            count=count,
            block_ms=block_ms,
            client_name=name,
        )
        self.started.append(reader)
        return reader.start_holding()

    def go(self, *consumers: bytes) -> None:
        """Let these readers (default: all) loop, and wait until each one waits."""
        chosen = [r for r in self.started if not consumers or r.consumer in consumers]
        for reader in chosen:
            reader.go.set()
        for reader in chosen:
            if not reader.stopped:
                reader.wait_waiting()

    def kill_all(self) -> None:
        for reader in self.started:
            if reader.is_alive():
                reader.kill()
