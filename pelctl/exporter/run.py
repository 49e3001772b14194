"""Running the exporter: :func:`serve` (the endpoint and a refresh loop per server, until
SIGTERM or SIGINT) and :func:`once` (one refresh of every server, as the text format)."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from pelctl.core.monitor.refresh import MonitorOptions
from pelctl.exporter.endpoint import Endpoint, is_loopback
from pelctl.exporter.loop import Failure, Loops, ServerLoop, Target
from pelctl.exporter.metrics import Collector, SeriesOptions
from pelctl.exporter.webconfig import WebConfig
from pelctl.reclaim.logs import event

# A port outside Prometheus' "default port allocations" (docs/monitoring.md, "Port").
DEFAULT_PORT = 19121
DEFAULT_INTERVAL_S = 15.0
# How long a stop waits for refreshes in flight (they only read; the rest is abandoned).
STOP_WAIT_S = 5.0


@dataclass(frozen=True)
class ExporterConfig:
    targets: tuple[Target, ...]
    monitor: MonitorOptions
    series: SeriesOptions
    interval_s: float = DEFAULT_INTERVAL_S


def registry_for(collector: Collector) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def _collector(cfg: ExporterConfig) -> Collector:
    from pelctl import __version__

    return Collector(options=cfg.series, version=__version__)


def once(
    cfg: ExporterConfig, log: logging.Logger
) -> tuple[CollectorRegistry, list[tuple[str, Failure]]]:
    """One refresh of every server (in parallel): the registry to print, and why each
    server that could not be read failed (the caller reports them: nothing is logged)."""
    collector = _collector(cfg)
    stop = threading.Event()
    loops = [
        ServerLoop(
            t,
            cfg.monitor,
            collector,
            interval_s=cfg.interval_s,
            log=log,
            stop=stop,
            log_failures=False,
        )
        for t in cfg.targets
    ]

    def run(i: int) -> None:
        try:
            loops[i].once()
        finally:
            loops[i].drop_connection()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(loops))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failures = [(loop.target.label, e) for loop in loops if (e := loop.last_error) is not None]
    return registry_for(collector), failures


def serve(
    cfg: ExporterConfig,
    log: logging.Logger,
    *,
    host: str,
    port: int,
    web: WebConfig | None,
    stop: threading.Event | None = None,
    ready: threading.Event | None = None,
) -> int:
    """Serve until ``stop`` is set (SIGTERM/SIGINT set it in the main thread); exit code 0."""
    stop = stop or threading.Event()
    collector = _collector(cfg)
    loops = Loops(
        [
            ServerLoop(t, cfg.monitor, collector, interval_s=cfg.interval_s, log=log, stop=stop)
            for t in cfg.targets
        ]
    )
    registry = registry_for(collector)
    if web is None and not is_loopback(host):
        event(
            log,
            logging.WARNING,
            "unprotected",
            detail=f"listening on {host} without --web-config: anyone who can reach it reads "
            "every stream and group name (see docs/monitoring.md, 'Protecting the endpoint')",
        )
    for warning in web.warnings if web is not None else ():
        event(log, logging.WARNING, "web-config", detail=warning)
    endpoint = Endpoint(host, port, registry, loops, web)
    try:
        bound = endpoint.address
        event(
            log,
            logging.INFO,
            "start",
            servers=[t.label for t in cfg.targets],
            listen=f"{bound[0]}:{bound[1]}",
            tls=endpoint.tls,
            basic_auth=bool(web is not None and web.users),
            interval_s=cfg.interval_s,
            match=cfg.monitor.match,
        )
        with _signals(stop, log):
            loops.start()
            if ready is not None:
                ready.set()
            while not stop.wait(1.0):
                pass
        loops.join(STOP_WAIT_S)
    finally:
        endpoint.close()
    event(log, logging.INFO, "stopped")
    return 0


@contextmanager
def _signals(stop: threading.Event, log: logging.Logger) -> Iterator[None]:
    """SIGTERM and SIGINT end the exporter (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        event(log, logging.INFO, "stopping", signal=signal.Signals(signum).name)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def labels_unique(targets: Sequence[Target]) -> list[str]:
    """The ``server`` labels given more than once."""
    seen: set[str] = set()
    twice = []
    for t in targets:
        if t.label in seen:
            twice.append(t.label)
        seen.add(t.label)
    return twice
