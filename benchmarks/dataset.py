"""The shared benchmark data: a real redis-server and PELs built fast with pelctl.demo.scenario."""

from __future__ import annotations

import random
import shutil
import time
from dataclasses import dataclass

import redis

from pelctl.demo import scenario as sc

CONSUMERS = 8
IDLE_FRACTION = 0.01
IDLE_MS = 3_600_000  # the idle 1% look idle for an hour
FIELDS = {b"n": b"1"}  # small fields: the PEL, not the payloads, is under test


@dataclass(frozen=True)
class Dataset:
    """One built PEL: ``size`` pending entries over ``consumers`` consumers."""

    stream: bytes
    group: bytes
    size: int
    consumers: int
    idle: int  # entries made idle for IDLE_MS
    build_s: float

    @property
    def label(self) -> str:
        return f"{self.size:,}"


class BenchServer:
    """A throwaway redis-server (or an existing one with ``url``) with SLOWLOG helpers."""

    def __init__(self, url: str | None = None, *, binary: str | None = None) -> None:
        self._proc = None
        self._dir = None
        if url is None:
            from pelctl.demo.server import start_server

            self._proc, port, self._dir = start_server(binary=binary)
            url = f"redis://127.0.0.1:{port}/0"
        self.url = url
        self.client = redis.Redis.from_url(url, protocol=2)
        self.raw = sc.raw(self.client)
        self.datasets: dict[int, Dataset] = {}

    @property
    def version(self) -> str:
        return str(self.client.info("server").get("redis_version", "?"))

    def close(self) -> None:
        self.client.close()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except Exception:  # noqa: BLE001
                self._proc.kill()
            shutil.rmtree(self._dir or "", ignore_errors=True)

    # -- SLOWLOG -----------------------------------------------------------------------------
    def slowlog_start(self, threshold_us: int = 10_000, max_len: int = 1024) -> None:
        self.raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", threshold_us)
        self.raw.execute_command("CONFIG", "SET", "slowlog-max-len", max_len)
        self.raw.execute_command("SLOWLOG", "RESET")

    def slowlog_entries(self, commands: tuple[bytes, ...] | None = None) -> list[tuple[int, list]]:
        """(duration µs, args) of every logged call, longest first; the SLOWLOG commands
        and CONFIG calls of the harness itself are left out."""
        entries = self.raw.execute_command("SLOWLOG", "GET", 1_000_000)
        out = []
        for entry in entries:
            args = entry[3]
            name = bytes(args[0]).upper() if args else b""
            if name in (b"SLOWLOG", b"CONFIG", b"INFO", b"PING", b"CLIENT", b"HELLO"):
                continue
            if commands is not None and name not in commands:
                continue
            out.append((int(entry[2]), args))
        out.sort(key=lambda e: -e[0])
        return out

    def slowlog_stop(self) -> None:
        self.raw.execute_command("CONFIG", "SET", "slowlog-log-slower-than", 10_000)
        self.raw.execute_command("SLOWLOG", "RESET")

    # -- data --------------------------------------------------------------------------------
    def dataset(self, size: int, *, reuse: bool = False) -> Dataset:
        """The PEL of ``size`` entries (built once per server and size)."""
        if size in self.datasets:
            return self.datasets[size]
        stream = f"bench:pel:{size}".encode()
        group = b"workers"
        if reuse and self._existing(stream, group, size):
            ds = Dataset(stream, group, size, CONSUMERS, int(size * IDLE_FRACTION), 0.0)
        else:
            ds = build(self.client, stream, group, size)
        self.datasets[size] = ds
        return ds

    def _existing(self, stream: bytes, group: bytes, size: int) -> bool:
        try:
            summary = self.raw.execute_command("XPENDING", stream, group)
        except redis.ResponseError:
            return False
        return int(summary[0] or 0) == size


def _numeric(entry_id: bytes) -> tuple[int, int]:
    ms, _, seq = entry_id.partition(b"-")
    return int(ms), int(seq or 0)


def build(
    client: redis.Redis,
    stream: bytes,
    group: bytes,
    size: int,
    *,
    consumers: int = CONSUMERS,
    idle_fraction: float = IDLE_FRACTION,
    idle_ms: int = IDLE_MS,
    seed: int = 3,
) -> Dataset:
    """``size`` entries delivered round-robin in blocks to ``consumers`` consumers, then
    ``idle_fraction`` of them (spread over the whole id range) made idle for ``idle_ms``."""
    t0 = time.perf_counter()
    client.delete(stream)
    sc.add_entries(client, stream, size, FIELDS, collect_ids=False)
    sc.create_group(client, stream, group)
    per = size // consumers
    rng = random.Random(seed)
    batches: list[sc.Aging] = []
    for n in range(consumers):
        name = f"worker-{n}".encode()
        want = per if n < consumers - 1 else size - per * (consumers - 1)
        ids = sc.deliver(client, stream, group, name, want)
        # In numeric id order: aged in that order, their delivery times fall as their ids
        # rise, so a DUMP/RESTORE of the stream (each run's reset) rebuilds Redis 8.4+'s
        # time-ordered PEL by prepending. In byte order ("1-10" before "1-9") a RESTORE of
        # the 1M-entry PEL walks it for each aged entry: minutes.
        chosen = sorted(rng.sample(ids, int(len(ids) * idle_fraction)), key=_numeric)
        batches.append(sc.Aging(name, chosen, idle_ms))
    # Every consumer's entries delivered first, then aged in one call: on Redis 8.4+ each
    # aged entry is then prepended to the group's time-ordered PEL (O(1), not O(PEL)).
    sc.age(client, stream, group, batches)
    idle_total = sum(len(b.ids) for b in batches)
    return Dataset(stream, group, size, consumers, idle_total, time.perf_counter() - t0)
