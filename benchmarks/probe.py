"""Another client's view of the server: a process that sends ``PING`` every millisecond and
records each round trip (what a user of the same Redis waits while pelctl works).

``python -m benchmarks.probe URL OUT`` runs until SIGTERM, then writes the pings (the
``time.perf_counter()`` each was sent at, its round trip in ms; one per line) to OUT.
:class:`Probe` starts and stops it around a block of work.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from benchmarks import ROOT

PERIOD_S = 0.001


@dataclass(frozen=True)
class Latencies:
    """The probe's round trips (ms), sorted."""

    values: tuple[float, ...]

    def pct(self, q: float) -> float:
        v = self.values
        if not v:
            return 0.0
        return v[min(len(v) - 1, int(len(v) * q))]

    @property
    def p50(self) -> float:
        return self.pct(0.5)

    @property
    def p99(self) -> float:
        return self.pct(0.99)

    @property
    def p999(self) -> float:
        return self.pct(0.999)

    @property
    def max(self) -> float:
        return self.values[-1] if self.values else 0.0

    def line(self) -> str:
        return (
            f"{len(self.values):,} pings: p50 {self.p50:.2f} ms, p99 {self.p99:.2f} ms, "
            f"p99.9 {self.p999:.2f} ms, max {self.max:.2f} ms"
        )


class Probe:
    """``with Probe(url) as probe: work()`` then ``probe.latencies``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.latencies = Latencies(())
        self.timeline: list[tuple[float, float]] = []  # (perf_counter when sent, ms)
        self._proc: subprocess.Popen[str] | None = None
        self._out = ""

    def __enter__(self) -> Probe:
        fd, self._out = tempfile.mkstemp(prefix="pelctl-probe-")
        os.close(fd)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.probe", self.url, self._out],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self._proc.stdout is not None
        self._proc.stdout.readline()  # "ready": connected and pinging
        return self

    def __exit__(self, *exc: object) -> None:
        proc = self._proc
        if proc is None:
            return
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        with open(self._out) as f:
            pairs = [line.split() for line in f if line.strip()]
        self.timeline = [(float(t), float(ms)) for t, ms in pairs]
        self.latencies = Latencies(tuple(sorted(ms for _t, ms in self.timeline)))
        os.unlink(self._out)

    def between(self, start: float, end: float) -> Latencies:
        """The round trips of the pings sent between two ``time.perf_counter()`` readings
        (CLOCK_MONOTONIC: comparable across processes)."""
        return Latencies(tuple(sorted(ms for t, ms in self.timeline if start <= t < end)))


def _main(url: str, out: str) -> None:
    import redis

    r = redis.Redis.from_url(url, protocol=2)
    r.ping()
    stop = [False]

    def on_term(_signum: int, _frame: object) -> None:
        stop[0] = True

    signal.signal(signal.SIGTERM, on_term)
    rtts: list[tuple[float, float]] = []
    print("ready", flush=True)
    next_at = time.perf_counter()
    while not stop[0]:
        t0 = time.perf_counter()
        r.execute_command("PING")
        rtts.append((t0, (time.perf_counter() - t0) * 1000.0))
        next_at += PERIOD_S
        pause = next_at - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        else:
            next_at = time.perf_counter()
    with open(out, "w") as f:
        f.write("\n".join(f"{t:.6f} {ms:.4f}" for t, ms in rtts))


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])
