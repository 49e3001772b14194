"""Real FastStream and taskiq workers against the session's redis-server, for pelctl's tests.

The pieces, for tests that want to add their own assertions:

- ``Framework`` (``FASTSTREAM``, ``TASKIQ``): how to publish through the library, how to run
  its worker as a process, and what "intact" means for it;
- ``Harness``: one stream and consumer group driven by one framework: ``publish`` messages
  through the library, ``start_worker`` processes (each journals every message it
  processes, see journal.py), ``crash_worker_holding`` (a worker SIGKILLed while it holds
  messages, which stay in its PEL), ``wait_processed``, ``tally`` (published, processed,
  duplicated, lost) and ``assert_intact`` (what the handler got is byte-identical to what
  was published);
- the ``frameworks`` fixture (conftest.py) builds a ``Harness`` and kills every process it
  started when the test ends.

Every wait polls a condition with a generous deadline; nothing sleeps a fixed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from tests.frameworks import journal
from tests.support.waiting import wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 60.0  # generous: the machine is small and shared

FASTSTREAM = "faststream"
TASKIQ = "taskiq"
FRAMEWORKS = (FASTSTREAM, TASKIQ)


@dataclass(frozen=True)
class Published:
    """One message as it was published through the framework, and the entry it became."""

    key: str  # FastStream: the correlation id; taskiq: the task id
    entry_id: str
    fields: dict[bytes, bytes]  # the stream entry's fields right after publishing
    body: bytes  # FastStream: the body in the frame; taskiq: the ``data`` field
    headers: dict[str, Any]  # FastStream: the frame's headers; taskiq: the task's labels
    args: list[Any] = field(default_factory=list)  # taskiq only
    kwargs: dict[str, Any] = field(default_factory=dict)  # taskiq only
    hold: bool = False


@dataclass(frozen=True)
class Tally:
    published: int
    processed: int  # distinct messages processed at least once
    processing_events: int  # processed records, repeats included
    duplicated: int  # processing events beyond the first of each message
    lost: int  # published, never processed
    lost_keys: tuple[str, ...] = ()

    def line(self) -> str:
        return (
            f"published {self.published}, processed {self.processed}, "
            f"duplicated {self.duplicated}, lost {self.lost}"
        )


@dataclass
class Worker:
    """A framework worker process (its own process group, so a SIGKILL takes all of it)."""

    framework: str
    consumer: str
    proc: subprocess.Popen
    journal_path: Path
    log_path: Path
    server: redis.Redis  # to watch the worker's connections (CLIENT LIST)
    client_name: str  # every connection of the worker has this name (CLIENT SETNAME)
    gate_path: Path | None = None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def connections(self) -> int:
        return sum(1 for c in self.server.client_list() if c.get("name") == self.client_name)

    def kill(self) -> None:
        """SIGKILL the whole process group (taskiq runs its workers as child processes),
        then wait until Redis has dropped the worker's connections.

        Until Redis notices a closed connection, an ``XREADGROUP ... BLOCK`` the dead
        worker left behind is still served: a new entry can be delivered to the dead
        consumer and land in its PEL. (On a host that vanishes without closing its sockets
        that lasts until the server's TCP keepalive gives up.) Waiting here keeps the
        tests deterministic; docs/frameworks.md tells operators about it.
        """
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(30)
        wait_for(lambda: self.connections() == 0, f"Redis to drop {self.consumer}'s connections")

    def release(self) -> None:
        """Let a worker started with ``gated=True`` connect and start consuming."""
        assert self.gate_path is not None, "not a gated worker"
        self.gate_path.touch()

    def records(self, event: str | None = None) -> list[dict[str, Any]]:
        recs = journal.read(str(self.journal_path))
        return [r for r in recs if event is None or r.get("event") == event]

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""


# -- framework adapters -------------------------------------------------------------------


class Framework:
    name: str

    def publish(self, url: str, stream: str, group: str, messages: list[dict[str, Any]]) -> None:
        raise NotImplementedError

    def key_of(self, fields: dict[bytes, bytes]) -> str | None:
        raise NotImplementedError

    def published(self, entry_id: str, fields: dict[bytes, bytes]) -> Published:
        raise NotImplementedError

    def worker_command(self) -> list[str]:
        raise NotImplementedError

    def differences(self, pub: Published, record: dict[str, Any]) -> list[str]:
        """Where a processed record differs from what was published (empty: intact)."""
        raise NotImplementedError


def _message_specs(keys: Iterable[str], hold: bool, kind: str) -> list[dict[str, Any]]:
    """``kind="mixed"``: a JSON object and a binary body (not UTF-8: NUL, 0xFF, a broken
    sequence) in turn; ``kind="json"``: JSON objects only (an ``Order`` for the workers'
    pydantic handlers)."""
    specs = []
    for i, key in enumerate(keys):
        body: Any = (
            {"order": key, "amount": i, "note": "crème brûlée"}
            if kind == "json" or i % 2 == 0
            else b"\x00\xffbin:" + key.encode() + b"\xc3\x28"
        )
        specs.append({"key": key, "body": body, "hold": hold, "trace": f"trace-{key}"})
    return specs


class _FastStream(Framework):
    name = FASTSTREAM

    def publish(self, url: str, stream: str, group: str, messages: list[dict[str, Any]]) -> None:
        from faststream.redis import RedisBroker

        async def run() -> None:
            broker = RedisBroker(url)
            await broker.connect()
            try:
                for m in messages:
                    headers = {"x-trace": m["trace"]}
                    if m["hold"]:
                        headers["x-hold"] = "1"
                    await broker.publish(
                        m["body"], stream=stream, headers=headers, correlation_id=m["key"]
                    )
            finally:
                await broker.stop()

        asyncio.run(run())

    @staticmethod
    def parse(frame: bytes) -> tuple[bytes, dict[str, Any]]:
        from faststream.redis.parser import BinaryMessageFormatV1

        return BinaryMessageFormatV1.parse(frame)

    def key_of(self, fields: dict[bytes, bytes]) -> str | None:
        frame = fields.get(b"__data__")
        if frame is None:
            return None
        return self.parse(frame)[1].get("correlation_id")

    def published(self, entry_id: str, fields: dict[bytes, bytes]) -> Published:
        body, headers = self.parse(fields[b"__data__"])
        return Published(
            key=headers["correlation_id"],
            entry_id=entry_id,
            fields=dict(fields),
            body=body,
            headers=headers,
            hold=headers.get("x-hold") == "1",
        )

    def worker_command(self) -> list[str]:
        return [sys.executable, "-m", "tests.frameworks.faststream_worker"]

    def differences(self, pub: Published, record: dict[str, Any]) -> list[str]:
        out = []
        got_body = bytes.fromhex(record["body"])
        if got_body != pub.body:
            out.append(f"{pub.key}: body {got_body!r} != published {pub.body!r}")
        if record["headers"] != pub.headers:
            out.append(f"{pub.key}: headers {record['headers']} != published {pub.headers}")
        got_frame = journal.unhexed_fields(record["fields"]).get(b"__data__")
        if got_frame != pub.fields[b"__data__"]:
            out.append(f"{pub.key}: __data__ frame differs from the published one")
        return out


class _Taskiq(Framework):
    name = TASKIQ

    def publish(self, url: str, stream: str, group: str, messages: list[dict[str, Any]]) -> None:
        # The task module reads its configuration from the environment when imported; the
        # publisher only needs the task's name, so it kicks through a broker of its own.
        # Configured like the workers' broker: its startup() creates the consumer group
        # (at "$") when missing, as a taskiq app's publishing side does.
        from taskiq_redis import RedisStreamBroker

        from tests.frameworks.taskiq_worker import TASK_NAME

        async def run() -> None:
            broker = RedisStreamBroker(url, queue_name=stream, consumer_group_name=group)
            await broker.startup()
            try:
                task = broker.register_task(_taskiq_stub, task_name=TASK_NAME)
                for m in messages:
                    body = m["body"]
                    payload = body if not isinstance(body, bytes) else body.hex()
                    kicker = task.kicker().with_task_id(m["key"]).with_labels(trace=m["trace"])
                    await kicker.kiq(payload, hold=m["hold"])
            finally:
                await broker.shutdown()

        asyncio.run(run())

    def key_of(self, fields: dict[bytes, bytes]) -> str | None:
        data = fields.get(b"data")
        if data is None:
            return None
        try:
            return json.loads(data)["task_id"]
        except (ValueError, KeyError, TypeError):
            return None

    def published(self, entry_id: str, fields: dict[bytes, bytes]) -> Published:
        msg = json.loads(fields[b"data"])
        return Published(
            key=msg["task_id"],
            entry_id=entry_id,
            fields=dict(fields),
            body=fields[b"data"],
            headers=msg["labels"],
            args=msg["args"],
            kwargs=msg["kwargs"],
            hold=bool(msg["kwargs"].get("hold")),
        )

    def worker_command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "taskiq",
            "worker",
            "tests.frameworks.taskiq_worker:broker",
            "--workers",
            "1",
            "--shutdown-timeout",
            "1",
        ]

    def differences(self, pub: Published, record: dict[str, Any]) -> list[str]:
        out = []
        got = journal.unhexed_fields(record["fields"]).get(b"data")
        if got != pub.body:
            out.append(f"{pub.key}: data field {got!r} != published {pub.body!r}")
        for name, want in (("args", pub.args), ("kwargs", pub.kwargs), ("labels", pub.headers)):
            if record[name] != want:
                out.append(f"{pub.key}: {name} {record[name]!r} != published {want!r}")
        if record["task_name"] != "pelctl_tests.work":
            out.append(f"{pub.key}: task_name {record['task_name']!r}")
        return out


async def _taskiq_stub(payload: Any, hold: bool = False) -> None:  # pragma: no cover
    """Stands in for the worker's task on the publishing side (only its name is sent)."""


ADAPTERS: dict[str, Framework] = {FASTSTREAM: _FastStream(), TASKIQ: _Taskiq()}


# -- the harness --------------------------------------------------------------------------


@dataclass
class Crash:
    """A worker SIGKILLed while holding messages: what it left in its PEL."""

    worker: Worker
    held_keys: list[str]
    pending_ids: list[bytes]


@dataclass
class Incident:
    crash: Crash
    live: Worker
    after_keys: list[str]


class Harness:
    """One stream + consumer group driven by one framework's real publisher and workers."""

    def __init__(
        self, framework: str, url: str, client: redis.Redis, workdir: Path, stream: str
    ) -> None:
        self.fw = ADAPTERS[framework]
        self.framework = framework
        self.url = url
        self.r = client
        self.workdir = workdir
        self.stream = stream
        self.group = f"{stream}-group"
        self.workers: list[Worker] = []
        self.published: dict[str, Published] = {}
        self._seq = 0
        # The group exists before anything is published or any worker starts, from the
        # stream's beginning: both libraries create theirs at "$" (new entries only) and
        # tolerate an existing one.
        self.r.xgroup_create(stream, self.group, id="0", mkstream=True)

    # processes

    def start_worker(
        self,
        consumer: str,
        *,
        hold: bool = False,
        body: str = "raw",
        idle_timeout_ms: int | None = None,
        gated: bool = False,
        client_name: str | None = None,
    ) -> Worker:
        """Start a worker process reading the group as ``consumer``.

        ``hold``: messages published with ``hold=True`` block its handler forever.
        ``gated``: the process imports everything, then waits for ``worker.release()``
        before it connects (hides the libraries' start-up time, ~2 s here, in a scenario).
        ``body`` (FastStream): ``raw``, ``lenient`` or ``strict`` handler signature.
        ``idle_timeout_ms`` (taskiq): the broker's own XAUTOCLAIM threshold.
        ``client_name``: the name of its connections (default ``fw:STREAM:CONSUMER:N``; the
        consumer's own name makes pelctl see the worker as connected).
        """
        n = len(self.workers)
        client_name = client_name or f"fw:{self.stream}:{consumer}:{n}"
        journal_path = self.workdir / f"{consumer}-{n}.jsonl"
        log_path = self.workdir / f"{consumer}-{n}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS", "FW_"))}
        env.update(
            PYTHONPATH=str(REPO_ROOT),
            PYTHONUNBUFFERED="1",
            FW_URL=f"{self.url}?client_name={client_name}",
            FW_STREAM=self.stream,
            FW_GROUP=self.group,
            FW_CONSUMER=consumer,
            FW_JOURNAL=str(journal_path),
            FW_HOLD="1" if hold else "0",
            FW_BODY=body,
        )
        if idle_timeout_ms is not None:
            env["FW_IDLE_TIMEOUT_MS"] = str(idle_timeout_ms)
        gate_path = self.workdir / f"{consumer}-{n}.gate" if gated else None
        if gate_path is not None:
            env["FW_GATE"] = str(gate_path)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                self.fw.worker_command(),
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        worker = Worker(
            self.framework, consumer, proc, journal_path, log_path, self.r, client_name, gate_path
        )
        self.workers.append(worker)
        return worker

    def stop_all(self) -> None:
        for w in self.workers:
            w.kill()

    # publishing

    def publish(
        self, count: int, *, hold: bool = False, prefix: str = "m", kind: str = "mixed"
    ) -> list[str]:
        """Publish ``count`` messages through the framework; returns their keys.

        ``hold``: mark them so a worker started with ``hold=True`` blocks on them.
        ``kind``: ``mixed`` (JSON and binary bodies) or ``json`` (see _message_specs)."""
        keys = []
        for _ in range(count):
            self._seq += 1
            keys.append(f"{self.framework}-{prefix}-{self._seq:04d}")
        self.fw.publish(self.url, self.stream, self.group, _message_specs(keys, hold, kind))
        wanted = set(keys)
        for entry_id, fields in self.r.xrange(self.stream):
            key = self.fw.key_of(fields)
            if key in wanted and key not in self.published:
                self.published[key] = self.fw.published(entry_id.decode(), fields)
        missing = wanted - self.published.keys()
        assert not missing, f"published but not found on the stream: {sorted(missing)}"
        return keys

    # observing

    def records(self, event: str = "processed") -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for w in self.workers:
            out.extend(w.records(event))
        return out

    def processed_keys(self) -> Counter:
        return Counter(r["key"] for r in self.records("processed"))

    def wait_processed(self, keys: Iterable[str], what: str = "", timeout: float = DEADLINE_S):
        keys = set(keys)

        def done() -> bool:
            return keys <= set(self.processed_keys())

        try:
            wait_for(done, what or f"{len(keys)} messages to be processed", timeout)
        except AssertionError as exc:
            missing = sorted(keys - set(self.processed_keys()))
            raise AssertionError(f"{exc}; missing {missing}\n{self.diagnostics()}") from None

    def diagnostics(self) -> str:
        """The group's PEL and the tail of each worker's log, for a failure message."""
        lines = ["PEL:"]
        for row in self.pending():
            entry = self.entry(row["message_id"]) or {}
            lines.append(
                f"  {row['message_id']!r} {self.fw.key_of(entry)} consumer={row['consumer']!r} "
                f"idle={row['time_since_delivered']} deliveries={row['times_delivered']}"
            )
        for w in self.workers:
            lines.append(f"--- {w.consumer} (pid {w.proc.pid}, alive {w.alive}):\n{w.log()}")
        return "\n".join(lines)

    def pending(self, consumer: str | None = None) -> list[dict[str, Any]]:
        """The group's PEL (as redis-py's xpending_range dicts), optionally one consumer's."""
        kwargs: dict[str, Any] = {"consumername": consumer} if consumer else {}
        return self.r.xpending_range(self.stream, self.group, "-", "+", 10_000, **kwargs)

    def pending_keys(self, consumer: str | None = None) -> list[str]:
        out = []
        for row in self.pending(consumer):
            entries = self.r.xrange(self.stream, row["message_id"], row["message_id"])
            out.extend(str(self.fw.key_of(fields)) for _id, fields in entries)
        return out

    def entry(self, entry_id: str | bytes) -> dict[bytes, bytes] | None:
        rows = self.r.xrange(self.stream, entry_id, entry_id)
        return rows[0][1] if rows else None

    # scenarios

    def crash_worker_holding(self, consumer: str = "victim", *, normal: int, held: int) -> Crash:
        """Publish ``normal`` then ``held`` messages, let a worker take them all, SIGKILL it.

        Everything is published before the worker reads, so its first read gets all of it:
        it processes the normal ones, then blocks in its handler on the first held one
        (taskiq runs tasks concurrently: on every held one), and is killed there. The held
        messages stay in its PEL: delivered once, never acknowledged.
        """
        worker = self.start_worker(consumer, hold=True, gated=True)
        self.publish(normal, prefix="a")
        held_keys = self.publish(held, hold=True, prefix="held")
        worker.release()

        def holding() -> bool:
            if not worker.alive:
                raise AssertionError(f"{consumer} exited:\n{worker.log()}")
            return bool(worker.records("holding")) and len(self.pending(consumer)) == held

        wait_for(holding, f"{consumer} to hold {held} messages")
        assert worker.connections() > 0  # kill() can tell when Redis has dropped them
        worker.kill()
        pending_ids = [row["message_id"] for row in self.pending(consumer)]
        assert sorted(self.pending_keys(consumer)) == sorted(held_keys)
        return Crash(worker, held_keys, pending_ids)

    def incident(self, *, normal: int = 4, held: int = 3, after: int = 3) -> Incident:
        """The usual starting point of a repair test.

        A worker ``victim`` is SIGKILLed holding ``held`` messages (see
        ``crash_worker_holding``); a worker ``live`` runs and has processed ``after`` new
        messages (so its consumer exists and it is known to be reading).
        """
        live = self.start_worker("live", gated=True)  # imports while the victim works
        crash = self.crash_worker_holding(normal=normal, held=held)
        live.release()
        after_keys = self.publish(after, prefix="b")
        self.wait_processed(after_keys, "the live worker to process new messages")
        return Incident(crash, live, after_keys)

    def strand(self, consumer: str = "gone") -> list[bytes]:
        """Read every new entry as ``consumer`` and never ack: a consumer that died after
        reading (no process needed). Returns the entry ids now in its PEL."""
        got = self.r.xreadgroup(self.group, consumer, {self.stream: ">"})
        return [entry_id for _stream, entries in got for entry_id, _fields in entries]

    # verdicts

    def tally(self) -> Tally:
        processed = self.processed_keys()
        published = set(self.published)
        lost = sorted(published - set(processed))
        return Tally(
            published=len(published),
            processed=len(published & set(processed)),
            processing_events=sum(processed.values()),
            duplicated=sum(n - 1 for n in processed.values()),
            lost=len(lost),
            lost_keys=tuple(lost),
        )

    def assert_intact(self, keys: Iterable[str] | None = None) -> int:
        """Every processed record of ``keys`` (default: all records) matches what was
        published; returns how many records were checked."""
        wanted = None if keys is None else set(keys)
        problems: list[str] = []
        checked = 0
        for rec in self.records("processed"):
            if wanted is not None and rec["key"] not in wanted:
                continue
            if rec["key"] not in self.published:
                problems.append(f"processed a message nobody published: {rec['key']}")
                continue
            problems.extend(self.fw.differences(self.published[rec["key"]], rec))
            checked += 1
        assert not problems, "\n".join(problems)
        return checked

    def processed_fields(self, key: str) -> list[dict[bytes, bytes]]:
        """The stream entry fields each processing of ``key`` saw."""
        return [journal.unhexed_fields(r["fields"]) for r in self.records() if r["key"] == key]
