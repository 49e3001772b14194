"""The hostile dataset on its own redis-server (one per test module), and a CLI runner.

``build(client)`` writes, for every corpus entry ``P`` (:mod:`tests.hostile.corpus`):
stream ``P`` with group ``P``; six entries whose fields are ``P=P`` and ``n=1``; four of them
pending on consumer ``P`` (idle 2h, delivered 7 times: dead suspects and poison), two on
consumer ``worker``; one of ``P``'s entries deleted (a ghost); and the dead-letter stream
``P:dlq`` with one enveloped entry (source, group, owner and reason ``P``, the field ``P=P``).

And one stream holding every name at once, so a command that lists consumers, fields or
reasons covers the whole corpus in one call: ``hostile:all`` (group ``all``) where consumer
``P`` holds two entries with the field ``P=P`` (one of them deleted: a ghost), and
``hostile:all:dlq`` with one entry per ``P`` (owner, reason and field ``P``); the 64 KiB name
is left out of these two and lives in database 1 (one name that long is enough, not one in
every row of every listing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from unittest import mock

import pytest
import redis

from pelctl.base.binary import escape
from pelctl.demo import scenario as sc
from tests.conftest import RedisServer, start_redis
from tests.hostile.corpus import BIG, SMALL, Hostile
from tests.integration.dlq_builders import add_dead

HOUR = 3_600_000
WORKER = b"worker"
ALL = b"hostile:all"
ALL_GROUP = b"all"
ALL_DLQ = ALL + b":dlq"


@dataclass
class Target:
    """What the dataset holds for one corpus entry."""

    hostile: Hostile
    db: int = 0  # the 64 KiB name lives in database 1: listings of database 0 stay fast
    pending: list[bytes] = field(default_factory=list)  # ids pending on consumer P
    worker: list[bytes] = field(default_factory=list)  # ids pending on "worker"
    ghost: bytes = b""  # the deleted one (still pending on P)
    dead_id: bytes = b""  # the entry in P:dlq

    @property
    def name(self) -> bytes:
        return self.hostile.raw

    @property
    def dlq(self) -> bytes:
        return self.hostile.raw + b":dlq"

    @property
    def arg(self) -> str:
        """The name as typed on a command line (escape's text; unescape turns it back)."""
        return escape(self.hostile.raw)

    @property
    def dlq_arg(self) -> str:
        return escape(self.dlq)


def build_one(client: redis.Redis, h: Hostile, db: int = 0) -> Target:
    p = h.raw
    t = Target(h, db)
    ids = sc.add_entries(client, p, 6, {p: p, b"n": b"1"})
    sc.create_group(client, p, p)
    t.pending = sc.deliver(client, p, p, p, 4)
    t.worker = sc.deliver(client, p, p, WORKER, 2)
    sc.set_idle(client, p, p, p, t.pending, 2 * HOUR, deliveries=7)
    sc.set_idle(client, p, p, WORKER, t.worker, HOUR)
    t.ghost = t.pending[-1]
    sc.raw(client).execute_command("XDEL", p, t.ghost)
    t.dead_id = add_dead(
        client,
        t.dlq,
        p,
        ((p, p),),
        group=p,
        original_id=ids[0],
        owner=p,
        reason=p,
        deliveries=7,
        idle_ms=2 * HOUR,
    )
    return t


def build_all(client: redis.Redis) -> None:
    sc.create_group(client, ALL, ALL_GROUP)
    for h in SMALL:  # the 64 KiB name is one entry of its own, not in every row
        p = h.raw
        ids = sc.add_entries(client, ALL, 2, {p: p})
        sc.deliver(client, ALL, ALL_GROUP, p, 2)
        sc.set_idle(client, ALL, ALL_GROUP, p, ids[:1], 2 * HOUR, deliveries=7)
        sc.raw(client).execute_command("XDEL", ALL, ids[1])
        add_dead(
            client,
            ALL_DLQ,
            ALL,
            ((p, p),),
            group=ALL_GROUP,
            original_id=ids[0],
            owner=p,
            reason=p,
            deliveries=7,
            idle_ms=2 * HOUR,
        )


def build(server: RedisServer) -> dict[str, Target]:
    client, big = server.client(), server.client(db=1)
    try:
        client.flushall()
        targets = {h.key: build_one(client, h) for h in SMALL}
        targets[BIG.key] = build_one(big, BIG, db=1)
        build_all(client)
    finally:
        client.close()
        big.close()
    return targets


@pytest.fixture(scope="module")
def hostile_server() -> Iterator[RedisServer]:
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def dataset(hostile_server: RedisServer) -> dict[str, Target]:
    return build(hostile_server)


@dataclass
class Run:
    exit_code: int
    stdout_bytes: bytes
    stderr_bytes: bytes

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def json(self):
        import json

        return json.loads(self.stdout_bytes)

    @property
    def ndjson(self) -> list:
        import json

        return [json.loads(line) for line in self.stdout_bytes.splitlines() if line.strip()]


def invoke(
    url: str,
    *args: str,
    terminal: bool = False,
    env: dict[str, str] | None = None,
    input: str | None = None,
) -> Run:
    """pelctl in-process (typer's CliRunner). ``terminal``: rich believes stdout is a
    terminal (FORCE_COLOR), which is where markup errors and hyperlinks show."""
    import typer.testing
    from typer.testing import CliRunner

    from pelctl.cli.app import app
    from tests.conftest import _cached_command
    from tests.schemas.checker import check_output, recording

    full_env = {"PELCTL_URL": url, "COLUMNS": "200", "FORCE_COLOR": "1" if terminal else None}
    full_env.update(env or {})
    with mock.patch.object(typer.testing, "_get_command", _cached_command), recording() as seen:
        result = CliRunner().invoke(app, list(args), env=full_env, input=input)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    # Hostile names in every JSON output still match the documented schemas.
    check_output(seen, result.stdout, result.exit_code)
    return Run(result.exit_code, result.stdout_bytes, result.stderr_bytes)


@pytest.fixture
def run(hostile_server: RedisServer) -> Callable[..., Run]:
    """``run(*args, terminal=False, db=0, env=None, input=None)``."""

    def go(*args: str, db: int = 0, **kwargs: object) -> Run:
        url = hostile_server.url.rsplit("/", 1)[0] + f"/{db}"
        return invoke(url, *args, **kwargs)  # type: ignore[arg-type]

    return go
