"""Helpers of the reclaim tests: PEL builders, a runner factory, subprocess runners."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from pelctl.demo import scenario as sc
from tests.conftest import SERVER_VERSIONS, RedisServer
from tests.support.waiting import wait_for

HOUR = 3_600_000
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", params=SERVER_VERSIONS)
def redis_server(request: pytest.FixtureRequest, redis_servers: Callable[[str], RedisServer]):
    """The reclaim loop and ReliableConsumer run on Redis 7.0 and on Redis 8.6."""
    return redis_servers(request.param)


def build_pel(
    r: redis.Redis,
    n: int,
    *,
    stream: bytes = b"s",
    group: bytes = b"g",
    consumer: bytes = b"c1",
    idle: dict[int, int] | None = None,
    deliveries: dict[int, int] | None = None,
) -> list[bytes]:
    """``n`` entries all delivered to ``consumer``; ``idle[i] = ms`` makes entry ``i`` look
    idle, ``deliveries[i] = k`` delivered ``k`` times. Returns the ids."""
    ids = sc.add_entries(r, stream, n, {b"n": b"x"})
    sc.create_group(r, stream, group)
    sc.deliver(r, stream, group, consumer, n)
    same: dict[tuple[int, int | None], list[bytes]] = {}
    for i, ms in (idle or {}).items():
        same.setdefault((ms, (deliveries or {}).get(i)), []).append(ids[i])
    batches = [sc.Aging(consumer, chosen, ms, times) for (ms, times), chosen in same.items()]
    sc.age(r, stream, group, batches)  # one call: each entry prepended on Redis 8.4+
    return ids


def pending_ids(r: redis.Redis, stream: bytes = b"s", group: bytes = b"g") -> set[bytes]:
    rows = sc.raw(r).execute_command("XPENDING", stream, group, "-", "+", 1_000_000)
    return {row[0] for row in rows}


def copies(r: redis.Redis, stream: bytes = b"s") -> list[dict[bytes, bytes]]:
    """Requeued copies on the stream (entries with _original_id)."""
    return [f for _id, f in r.xrange(stream) if b"_original_id" in f]


@pytest.fixture
def make_runner(redis_server) -> Callable[..., object]:
    """``make_runner(streams=(b"s",), group=b"g", idle_ms=..., **cfg)`` on the session server."""
    from pelctl.reclaim.loop import ReclaimLoop
    from pelctl.reclaim.model import ReclaimConfig
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    made: list[ReclaimLoop] = []

    def make(metrics=None, connect_fn=None, runner_kwargs=None, **kwargs) -> ReclaimLoop:
        """``runner_kwargs``: ReclaimLoop's own options (wait_for_targets, summary_every_s, ...)."""
        kwargs.setdefault("streams", (b"s",))
        kwargs.setdefault("group", b"g")
        kwargs.setdefault("idle_ms", 30_000)
        kwargs.setdefault("once", True)
        cfg = ReclaimConfig(**kwargs)
        settings = ConnectionSettings(url=redis_server.url)
        runner = ReclaimLoop(
            cfg,
            connect_fn or (lambda: connect(settings)),
            metrics=metrics,
            server=redis_server.url,
            **(runner_kwargs or {}),
        )
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.drop_connection()


class Proc:
    """``pelctl reclaim`` in a subprocess, its JSON log lines collected by a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.lines: list[dict] = []
        self.raw: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pelctl", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.raw.append(line)
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def events(self, name: str) -> list[dict]:
        return [e for e in list(self.lines) if e.get("event") == name]

    def wait_for(self, pred: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
        wait_for(
            pred,
            what,
            timeout,
            alive=lambda: self.proc.poll() is None,
            describe=lambda: "log:\n" + "".join(self.raw[-40:]),
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def spawn(tmp_path) -> Iterator[Callable[..., Proc]]:
    procs: list[Proc] = []

    def start(url: str, *args: str) -> Proc:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
        env.update(
            PELCTL_URL=url,
            XDG_STATE_HOME=str(tmp_path / "state"),
            XDG_CONFIG_HOME=str(tmp_path / "config"),
            PYTHONUNBUFFERED="1",
        )
        p = Proc(["reclaim", *args, "--log-format", "json"], env)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.stop()
