"""End-to-end chaos: producers, workers that SIGKILL themselves mid-message, a ``pelctl reclaim``
runner that is SIGKILLed and restarted at random, and a redis-server killed and restarted
(AOF on, ``appendfsync always``). At the end every produced message must have been processed
or sit in the dead-letter stream with its envelope: zero lost. Duplicates are counted.

Used by tests/chaos/test_chaos_reclaim.py (a CI-sized run) and runnable on its own for
longer runs (see benchmarks/chaos.md)::

    .venv/bin/python -m tests.chaos.chaos_run --messages 200000 --workers 6

Every process is local: the server listens on a loopback port in a temp dir, and all the
loops are bounded in count and time.

The pieces (one OS process each, so SIGKILL is real):

- producer: XADD ``n`` = 0..N-1 in pipelined batches at a fixed rate; a batch cut off by
  the server restart is sent again (at-least-once production: such duplicates are counted);
- workers: ``XREADGROUP >``, "process" (append ``n`` to their own file, flushed), ``XACK``.
  Each kills itself with SIGKILL at random, before or after processing a message; the
  supervisor starts a replacement under a new consumer name. Messages whose ``n`` is a
  multiple of ``poison_every`` always fail (no ack): they must end in the DLQ;
- ``pelctl reclaim --idle 2s --max-deliveries 3`` (requeue strategy), SIGKILLed every
  1-3 s and restarted;
- the redis-server: SIGKILLed once, mid-production, and restarted on the same port and
  directory (its AOF replays every acknowledged write).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

STREAM, GROUP, DLQ = b"orders", b"billing", b"orders:dlq"
ENVELOPE = (
    b"_dlq_source",
    b"_dlq_group",
    b"_dlq_id",
    b"_dlq_owner",
    b"_dlq_deliveries",
    b"_dlq_idle_ms",
    b"_dlq_reason",
    b"_dlq_at",
)


@dataclass
class ChaosConfig:
    messages: int = 20_000
    workers: int = 4
    rate: float = 2_000.0  # produced messages per second
    kill_every: int = 500  # a worker kills itself about once per this many messages
    poison_every: int = 1_000  # n % poison_every == 0: the handler always fails
    idle: str = "2s"
    interval: str = "300ms"
    max_deliveries: int = 3
    reclaim_kill_s: tuple[float, float] = (1.0, 3.0)
    redis_restart_at: float = 0.5  # fraction of production
    timeout_s: float = 240.0
    seed: int = 20_240_601


@dataclass
class ChaosResult:
    produced: int = 0  # distinct messages
    produced_entries: int = 0  # stream entries written by the producer (>= produced)
    processed: int = 0  # distinct messages a worker processed
    processed_total: int = 0  # processing events (with repeats)
    duplicates: int = 0  # processing events beyond the first per message
    dead_lettered: int = 0  # distinct messages in the DLQ
    dead_letter_entries: int = 0
    poison: int = 0  # poison messages produced (all must be dead-lettered)
    poison_dead_lettered: int = 0
    processed_and_dead_lettered: int = 0
    lost: int = 0
    lost_sample: list[int] = field(default_factory=list)
    bad_envelopes: int = 0
    worker_kills: int = 0
    reclaim_kills: int = 0
    reclaim_restarts: int = 0
    redis_restarts: int = 0
    requeued_copies: int = 0
    elapsed_s: float = 0.0
    drained: bool = False

    def summary(self) -> str:
        return (
            f"produced {self.produced:,} (entries {self.produced_entries:,}), processed "
            f"{self.processed:,}, dead-lettered {self.dead_lettered:,} (poison {self.poison:,}), "
            f"lost {self.lost:,}, duplicates {self.duplicates:,}, worker kills "
            f"{self.worker_kills}, reclaim kills {self.reclaim_kills}, redis restarts "
            f"{self.redis_restarts}, requeued copies {self.requeued_copies:,}, "
            f"in {self.elapsed_s:.1f} s"
        )


# -- the child processes -----------------------------------------------------------------------


def _client(port: int):
    """A raw client (no response callbacks: XPENDING/XINFO replies as the server sends them)."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from pelctl.redis.connection import strip_callbacks

    client = redis.Redis(
        host="127.0.0.1",
        port=port,
        protocol=2,
        socket_timeout=5,
        socket_connect_timeout=2,
        retry=Retry(NoBackoff(), 0),
    )
    return strip_callbacks(client)


def producer_main(port: int, messages: int, rate: float, progress: str) -> None:
    import redis

    r = _client(port)
    batch = 100
    n = 0
    started = time.monotonic()
    while n < messages:
        end = min(n + batch, messages)
        pipe = r.pipeline(transaction=False)
        for i in range(n, end):
            pipe.execute_command("XADD", STREAM, "*", "n", str(i), "body", "x" * 32)
        try:
            pipe.execute()
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            time.sleep(0.1)  # the server is down or still loading: send the batch again
            continue
        n = end
        Path(progress).write_text(str(n))
        ahead = n / rate - (time.monotonic() - started)
        if ahead > 0:
            time.sleep(ahead)


def worker_main(
    port: int, name: str, out: str, kill_every: int, poison_every: int, seed: int, stop: str
) -> None:
    import redis

    rnd = random.Random(seed)
    r = _client(port)
    fh = open(out, "a", buffering=1)  # noqa: SIM115 - kept open for the process's life
    while not os.path.exists(stop):
        try:
            reply = r.execute_command(
                "XREADGROUP",
                "GROUP",
                GROUP,
                name,
                "COUNT",
                20,
                "BLOCK",
                200,
                "STREAMS",
                STREAM,
                ">",
            )
            for entry_id, flat in reply[0][1] if reply else []:
                fields = dict(zip(flat[0::2], flat[1::2], strict=True))
                n = int(fields[b"n"])
                if rnd.randrange(2 * kill_every) == 0:
                    os.kill(os.getpid(), signal.SIGKILL)  # crash before processing
                if n % poison_every == 0:
                    continue  # the handler fails: no ack, the entry stays pending
                fh.write(f"{n}\n")
                fh.flush()
                if rnd.randrange(2 * kill_every) == 0:
                    os.kill(os.getpid(), signal.SIGKILL)  # crash after processing, before ack
                r.execute_command("XACK", STREAM, GROUP, entry_id)
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            time.sleep(0.1)  # server restarting (or LOADING): read again


# -- the harness -----------------------------------------------------------------------------


class _Server:
    def __init__(self, binary: str, workdir: str) -> None:
        from tests.support import servers as sv

        self.sv = sv
        self.binary = binary
        self.dir = workdir
        self.port = sv.free_port()
        self.server = self._start()

    def _start(self):
        return self.sv.spawn(
            self.binary,
            ["--appendonly", "yes", "--appendfsync", "always", "--save", ""],
            port=self.port,
            workdir=self.dir,
        )

    def restart(self) -> None:
        self.server.kill(signal.SIGKILL)
        time.sleep(0.3)
        self.server = self._start()

    def stop(self) -> None:
        self.server.kill(signal.SIGTERM)


def _spawn(args: list[str], env: dict[str, str] | None = None, log: str | None = None):
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(
            [sys.executable, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
    finally:
        if log:
            out.close()


def _child(*args: str) -> list[str]:
    return ["-m", "tests.chaos.chaos_run", *args]


def run_chaos(cfg: ChaosConfig, workdir: str | None = None) -> ChaosResult:
    from tests.support import servers as sv

    rnd = random.Random(cfg.seed)
    binary = sv.which("redis-server")
    assert binary, "redis-server is not installed"
    own_dir = workdir is None
    root = Path(workdir or tempfile.mkdtemp(prefix="pelctl-chaos-"))
    (root / "redis").mkdir(parents=True, exist_ok=True)
    (root / "out").mkdir(exist_ok=True)
    stop_file = root / "stop"
    progress = root / "progress"
    result = ChaosResult()
    started = time.monotonic()
    server = _Server(binary, str(root / "redis"))
    procs: list[subprocess.Popen] = []
    reclaim: subprocess.Popen | None = None
    try:
        with _client(server.port) as r:
            r.execute_command("XGROUP", "CREATE", STREAM, GROUP, "$", "MKSTREAM")
        url = f"redis://127.0.0.1:{server.port}/0"
        reclaim_env = {"PELCTL_URL": url, "PELCTL_TIMEOUT": "3s"}
        reclaim_args = [
            "-m",
            "pelctl",
            "reclaim",
            STREAM.decode(),
            "--group",
            GROUP.decode(),
            "--idle",
            cfg.idle,
            "--interval",
            cfg.interval,
            "--max-deliveries",
            str(cfg.max_deliveries),
            "--max-backoff",
            "500ms",
            "--log-format",
            "json",
        ]

        def start_reclaim() -> subprocess.Popen:
            return _spawn(reclaim_args, reclaim_env, str(root / "reclaim.log"))

        producer = _spawn(
            _child("producer", str(server.port), str(cfg.messages), str(cfg.rate), str(progress)),
            log=str(root / "producer.log"),
        )
        workers: dict[int, tuple[subprocess.Popen, int]] = {}

        def start_worker(i: int, gen: int) -> None:
            name = f"w{i}-{gen}"
            proc = _spawn(
                _child(
                    "worker",
                    str(server.port),
                    name,
                    str(root / "out" / f"{name}.txt"),
                    str(cfg.kill_every),
                    str(cfg.poison_every),
                    str(rnd.randrange(2**31)),
                    str(stop_file),
                ),
                log=str(root / "workers.log"),
            )
            workers[i] = (proc, gen)

        for i in range(cfg.workers):
            start_worker(i, 0)
        reclaim = start_reclaim()
        next_reclaim_kill = time.monotonic() + rnd.uniform(*cfg.reclaim_kill_s)
        restarted = False
        deadline = started + cfg.timeout_s
        produced_done = False
        while time.monotonic() < deadline:
            time.sleep(0.05)
            for i, (proc, gen) in list(workers.items()):
                if proc.poll() is not None:
                    if proc.returncode == -signal.SIGKILL:
                        result.worker_kills += 1
                    start_worker(i, gen + 1)
            now = time.monotonic()
            if reclaim.poll() is not None:  # it exited by itself (should not): restart it
                reclaim = start_reclaim()
                result.reclaim_restarts += 1
            elif now >= next_reclaim_kill:
                reclaim.kill()
                reclaim.wait()
                result.reclaim_kills += 1
                time.sleep(rnd.uniform(0.0, 0.3))
                reclaim = start_reclaim()
                result.reclaim_restarts += 1
                next_reclaim_kill = now + rnd.uniform(*cfg.reclaim_kill_s)
            done = int(progress.read_text() or 0) if progress.exists() else 0
            if not restarted and done >= cfg.messages * cfg.redis_restart_at:
                server.restart()
                result.redis_restarts += 1
                restarted = True
            if not produced_done and producer.poll() is not None:
                produced_done = True
            if produced_done and now - started > 1 and _drained(server.port, cfg, root):
                result.drained = True
                break
        with contextlib.suppress(FileNotFoundError):
            producer.kill()
        stop_file.write_text("stop")
        procs = [p for p, _ in workers.values()]
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
        reclaim.send_signal(signal.SIGTERM)
        try:
            reclaim.wait(10)
        except subprocess.TimeoutExpired:
            reclaim.kill()
        reclaim = None
        _account(server.port, cfg, root, result)
    finally:
        for p in procs:
            with contextlib.suppress(OSError):
                p.kill()
        if reclaim is not None:
            with contextlib.suppress(OSError):
                reclaim.kill()
        server.stop()
        result.elapsed_s = time.monotonic() - started
        if own_dir:
            shutil.rmtree(root, ignore_errors=True)
    return result


def _processed(root: Path) -> Counter:
    counts: Counter = Counter()
    for path in (root / "out").glob("*.txt"):
        for line in path.read_text().splitlines():
            if line.strip():
                counts[int(line)] += 1
    return counts


def _dlq_messages(r) -> tuple[set[int], int, int]:
    seen: set[int] = set()
    entries = bad = 0
    for _id, flat in r.execute_command("XRANGE", DLQ, "-", "+"):
        fields = dict(zip(flat[0::2], flat[1::2], strict=True))
        entries += 1
        complete = b"n" in fields and all(k in fields for k in ENVELOPE)
        if not complete or (fields[b"_dlq_source"], fields[b"_dlq_group"]) != (STREAM, GROUP):
            bad += 1
        if b"n" in fields:
            seen.add(int(fields[b"n"]))
    return seen, entries, bad


def _drained(port: int, cfg: ChaosConfig, root: Path) -> bool:
    """Everything read and acknowledged, and every message processed or dead-lettered."""
    import redis

    try:
        with _client(port) as r:
            pending = int(r.execute_command("XPENDING", STREAM, GROUP)[0])
            groups = r.execute_command("XINFO", "GROUPS", STREAM)
            info = dict(zip(groups[0][0::2], groups[0][1::2], strict=True))
            if pending or info.get(b"lag") not in (0, None):
                return False
            dlq, _, _ = _dlq_messages(r)
    except (redis.RedisError, OSError):
        return False
    done = set(_processed(root)) | dlq
    return len(done) >= cfg.messages


def _account(port: int, cfg: ChaosConfig, root: Path, res: ChaosResult) -> None:
    with _client(port) as r:
        produced_entries: Counter = Counter()
        copies = 0
        start = b"-"
        while True:
            page = r.execute_command("XRANGE", STREAM, start, "+", "COUNT", 10_000)
            for _entry_id, flat in page:
                fields = dict(zip(flat[0::2], flat[1::2], strict=True))
                if b"_original_id" in fields:
                    copies += 1
                else:
                    produced_entries[int(fields[b"n"])] += 1
            if len(page) < 10_000:
                break
            start = b"(" + page[-1][0]
        dlq, dlq_entries, bad = _dlq_messages(r)
    processed = _processed(root)
    everything = set(range(cfg.messages))
    res.produced = len(set(produced_entries) & everything)
    res.produced_entries = sum(produced_entries.values())
    res.processed = len(processed)
    res.processed_total = sum(processed.values())
    res.duplicates = res.processed_total - res.processed
    res.dead_lettered = len(dlq)
    res.dead_letter_entries = dlq_entries
    poison = {n for n in everything if n % cfg.poison_every == 0}
    res.poison = len(poison)
    res.poison_dead_lettered = len(poison & dlq)
    res.processed_and_dead_lettered = len(set(processed) & dlq)
    lost = sorted(everything - set(processed) - dlq)
    res.lost = len(lost)
    res.lost_sample = lost[:20]
    res.bad_envelopes = bad
    res.requeued_copies = copies


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "producer":
        producer_main(int(argv[1]), int(argv[2]), float(argv[3]), argv[4])
        return 0
    if argv and argv[0] == "worker":
        worker_main(
            int(argv[1]), argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]), argv[7]
        )
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m tests.chaos.chaos_run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    defaults = ChaosConfig()
    parser.add_argument("--messages", type=int, default=defaults.messages)
    parser.add_argument("--workers", type=int, default=defaults.workers)
    parser.add_argument("--rate", type=float, default=defaults.rate, help="messages/s produced")
    parser.add_argument("--kill-every", type=int, default=defaults.kill_every)
    parser.add_argument("--timeout", type=float, default=defaults.timeout_s)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--keep", metavar="DIR", help="keep logs and outputs in DIR")
    args = parser.parse_args(argv)
    cfg = ChaosConfig(
        messages=args.messages,
        workers=args.workers,
        rate=args.rate,
        kill_every=args.kill_every,
        timeout_s=args.timeout,
        seed=args.seed,
    )
    res = run_chaos(cfg, args.keep)
    print(json.dumps(asdict(res), indent=1))
    print(res.summary())
    return 0 if res.lost == 0 and res.drained and not res.bad_envelopes else 1


if __name__ == "__main__":
    sys.exit(main())
