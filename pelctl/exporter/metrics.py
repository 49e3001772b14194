"""The exporter's metrics: what each server's last refresh found, as Prometheus series.

A :class:`Collector` is registered in the exporter's own ``CollectorRegistry``; a scrape
calls :meth:`Collector.collect`, which reads the latest :class:`ServerView` of each server
(swapped in whole by the refresh threads) and never touches Redis. prometheus-client writes
the text format, label escaping included. Every name here is documented in
docs/monitoring.md, and a test compares the two lists both ways.

Names and reasons read from Redis become label values through
:func:`pelctl.base.binary.escape` (the text pelctl prints for them: bytes that are not
UTF-8, control characters and backslashes escaped), so a label names a stream exactly as
``pelctl streams`` shows it and ``pelctl inspect`` accepts it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector as _Collector

from pelctl.base.binary import escape
from pelctl.core.liveness.verdict import VERDICTS
from pelctl.core.monitor.model import DlqState, GroupState, Refresh, StreamState
from pelctl.core.monitor.status import STATUSES

GROUP = ("server", "stream", "group")
DEFAULT_DLQ_REASONS = 10
OTHER_REASON = "other"
NO_REASON = "none"


class ConsumerSeries(StrEnum):
    """Which consumers get series of their own (``--consumer-metrics``)."""

    holding = "holding"  # consumers that hold pending entries
    all = "all"
    none = "none"


@dataclass(frozen=True)
class ServerView:
    """What a scrape shows of one server: its last refresh (kept while it is recent) and
    the exporter's own figures."""

    server: str  # the ``server`` label: the context's name, or the URL without credentials
    up: bool = False
    refresh: Refresh | None = None  # the last successful refresh, while it is recent
    last_success_s: float | None = None  # wall time the last successful refresh ended
    last_duration_s: float | None = None  # the last refresh, successful or not
    server_seconds: float | None = None  # server time the last refresh used
    errors: tuple[tuple[str, int], ...] = ()  # (kind, count) since start


@dataclass(frozen=True)
class SeriesOptions:
    consumers: ConsumerSeries = ConsumerSeries.holding
    dlq_reasons: int = DEFAULT_DLQ_REASONS  # top N reasons, the rest as "other"


@dataclass(frozen=True, slots=True)
class MetricDef:
    name: str  # as exposed (counters with their _total)
    kind: str  # gauge | counter
    help: str
    labels: tuple[str, ...]


def _m(name: str, kind: str, labels: tuple[str, ...], help: str) -> MetricDef:
    return MetricDef(name, kind, help, labels)


# Every series the exporter can expose (docs/monitoring.md documents each).
METRICS: tuple[MetricDef, ...] = (
    _m("pelctl_up", "gauge", ("server",), "1 if the last refresh of the server succeeded."),
    _m(
        "pelctl_refresh_duration_seconds",
        "gauge",
        ("server",),
        "Wall time the last refresh of the server took.",
    ),
    _m(
        "pelctl_last_refresh_timestamp_seconds",
        "gauge",
        ("server",),
        "Unix time the last successful refresh of the server ended.",
    ),
    _m(
        "pelctl_refresh_server_seconds",
        "gauge",
        ("server",),
        "Server time (Redis busy with the exporter's calls) the last refresh used.",
    ),
    _m(
        "pelctl_errors_total",
        "counter",
        ("server", "kind"),
        "Failed refreshes and skipped keys, by kind (connection, auth, permission, error).",
    ),
    _m(
        "pelctl_exporter_build_info",
        "gauge",
        ("version",),
        "The pelctl version serving these metrics (always 1).",
    ),
    _m("pelctl_stream_length", "gauge", ("server", "stream"), "Entries in the stream (XLEN)."),
    _m(
        "pelctl_stream_idmp_duplicates_total",
        "counter",
        ("server", "stream"),
        "XADD IDMP duplicates the server refused on the stream (Redis 8.6+).",
    ),
    _m("pelctl_group_pending", "gauge", GROUP, "Entries in the group's PEL."),
    _m(
        "pelctl_group_oldest_idle_seconds",
        "gauge",
        GROUP,
        "Longest time any pending entry has waited since its last delivery (queue latency).",
    ),
    _m(
        "pelctl_group_oldest_pending_age_seconds",
        "gauge",
        GROUP,
        "Age of the lowest pending entry, from the time in its id.",
    ),
    _m(
        "pelctl_group_pending_idle_over",
        "gauge",
        (*GROUP, "threshold"),
        "Pending entries idle at least the threshold (1m, 10m, 1h).",
    ),
    _m(
        "pelctl_group_poison",
        "gauge",
        GROUP,
        "Pending entries delivered 5 or more times (poison suspects).",
    ),
    _m(
        "pelctl_group_ghosts",
        "gauge",
        GROUP,
        "Pending entries whose stream entry was deleted or trimmed.",
    ),
    _m(
        "pelctl_group_scan_age_seconds",
        "gauge",
        GROUP,
        "Age of the PEL walk the idle-over, poison and ghost counts come from.",
    ),
    _m("pelctl_group_lag", "gauge", GROUP, "Entries of the stream not yet delivered to the group."),
    _m(
        "pelctl_group_lag_seconds",
        "gauge",
        GROUP,
        "Age of the oldest entry not yet delivered to the group (0: none waits).",
    ),
    _m(
        "pelctl_group_trimmed_unread",
        "gauge",
        GROUP,
        "Entries the group never read that a trim removed (at least; 1: some, count unknown).",
    ),
    _m(
        "pelctl_group_entries_read_total",
        "counter",
        GROUP,
        "Entries the group has read (XINFO GROUPS entries-read, Redis 7.0+).",
    ),
    _m(
        "pelctl_group_consumers",
        "gauge",
        (*GROUP, "verdict"),
        "Consumers of the group by liveness verdict (active, idle, dead-suspect, unknown).",
    ),
    _m(
        "pelctl_group_status",
        "gauge",
        (*GROUP, "status"),
        "1 for the group's status (ok, growing, stalled, stopped, no-consumers), 0 for others.",
    ),
    _m(
        "pelctl_consumer_pending",
        "gauge",
        (*GROUP, "consumer"),
        "Entries the consumer holds.",
    ),
    _m(
        "pelctl_consumer_idle_seconds",
        "gauge",
        (*GROUP, "consumer"),
        "Time since the consumer last read (Redis 7.2+: last tried to read).",
    ),
    _m("pelctl_dlq_length", "gauge", ("server", "stream", "dlq"), "Entries in the DLQ."),
    _m(
        "pelctl_dlq_oldest_age_seconds",
        "gauge",
        ("server", "stream", "dlq"),
        "Time since the DLQ's oldest entry was dead-lettered.",
    ),
    _m(
        "pelctl_dlq_newest_age_seconds",
        "gauge",
        ("server", "stream", "dlq"),
        "Time since the DLQ's newest entry was dead-lettered.",
    ),
    _m(
        "pelctl_dlq_entries",
        "gauge",
        ("server", "stream", "dlq", "reason"),
        "Entries in the DLQ by _dlq_reason: the most common ones, the rest as other.",
    ),
)
BY_NAME = {m.name: m for m in METRICS}


def label(name: bytes | str) -> str:
    """A name read from Redis as a label value: as pelctl prints it."""
    return escape(name)


def trimmed_unread(group: GroupState) -> int:
    """``pelctl_group_trimmed_unread``: the entries a trim removed before the group read
    them, as a number a rule can compare: 0 (nothing, as far as the server tells), the
    count (exact, or a lower bound on Redis 7.0/7.2 and Valkey once the group read past the
    gap), or 1 when the server cannot count them (the least that "some" can be)."""
    loss = group.trimmed_unread
    if loss is None:
        return 0
    return loss.count if loss.count is not None else 1


def threshold_label(ms: int) -> str:
    """``60000`` -> ``1m``, ``3600000`` -> ``1h``."""
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


class _Families:
    """One metric family per name, filled as the views are walked."""

    def __init__(self) -> None:
        self.families: dict[str, Metric] = {}

    def add(self, name: str, labels: Sequence[str], value: float) -> None:
        family = self.families.get(name)
        if family is None:
            m = BY_NAME[name]
            if m.kind == "counter":
                family = CounterMetricFamily(name, m.help, labels=m.labels)
            else:
                family = GaugeMetricFamily(name, m.help, labels=m.labels)
            self.families[name] = family
        family.add_metric(list(labels), value)  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[Metric]:
        # In the order of METRICS, so the text reads the same from scrape to scrape.
        for m in METRICS:
            family = self.families.get(m.name)
            if family is not None:
                yield family


class Collector(_Collector):
    """The exporter's collector: ``publish`` a server's view (refresh threads), ``collect``
    (scrapes)."""

    def __init__(self, options: SeriesOptions | None = None, version: str = "") -> None:
        self.options = options or SeriesOptions()
        self.version = version
        self._views: dict[str, ServerView] = {}
        self._lock = threading.Lock()

    def publish(self, view: ServerView) -> None:
        with self._lock:
            views = dict(self._views)
            views[view.server] = view
            self._views = views  # a scrape reads one whole dict, never a half-made one

    def views(self) -> list[ServerView]:
        return list(self._views.values())

    def collect(self) -> Iterator[Metric]:
        out = _Families()
        if self.version:
            out.add("pelctl_exporter_build_info", (self.version,), 1)
        for view in self._views.values():
            self._server(out, view)
        yield from out

    def _server(self, out: _Families, view: ServerView) -> None:
        s = view.server
        out.add("pelctl_up", (s,), 1 if view.up else 0)
        if view.last_duration_s is not None:
            out.add("pelctl_refresh_duration_seconds", (s,), view.last_duration_s)
        if view.last_success_s is not None:
            out.add("pelctl_last_refresh_timestamp_seconds", (s,), view.last_success_s)
        if view.server_seconds is not None:
            out.add("pelctl_refresh_server_seconds", (s,), view.server_seconds)
        for kind, count in view.errors:
            out.add("pelctl_errors_total", (s, kind), count)
        refresh = view.refresh
        if refresh is None:
            return
        now_ms = refresh.at_ms
        for stream in refresh.streams:
            self._stream(out, s, stream, now_ms)
        for dlq in refresh.dlqs:
            self._dlq(out, s, dlq, now_ms)

    def _stream(self, out: _Families, s: str, stream: StreamState, now_ms: int) -> None:
        name = label(stream.name)
        out.add("pelctl_stream_length", (s, name), stream.length)
        if stream.idmp_duplicates is not None:
            out.add("pelctl_stream_idmp_duplicates_total", (s, name), stream.idmp_duplicates)
        for group in stream.groups:
            self._group(out, (s, name, label(group.name)), group, now_ms)

    def _group(self, out: _Families, g: tuple[str, str, str], group: GroupState, now: int) -> None:
        out.add("pelctl_group_pending", g, group.pending)
        oldest = group.oldest_idle_ms if group.pending else 0
        if oldest is not None:
            out.add("pelctl_group_oldest_idle_seconds", g, oldest / 1000.0)
        age = group.oldest_pending_age_ms if group.pending else 0
        if age is not None:
            out.add("pelctl_group_oldest_pending_age_seconds", g, age / 1000.0)
        health = group.health
        if health is not None:
            for edge, count in zip(health.thresholds_ms, health.counts, strict=True):
                out.add("pelctl_group_pending_idle_over", (*g, threshold_label(edge)), count)
            out.add("pelctl_group_poison", g, health.poison)
        if group.ghosts is not None:
            out.add("pelctl_group_ghosts", g, group.ghosts)
        if group.walked_ms is not None:
            out.add("pelctl_group_scan_age_seconds", g, max(0, now - group.walked_ms) / 1000.0)
        if group.lag is not None:
            out.add("pelctl_group_lag", g, group.lag)
        if group.lag_ms is not None:
            out.add("pelctl_group_lag_seconds", g, group.lag_ms / 1000.0)
        out.add("pelctl_group_trimmed_unread", g, trimmed_unread(group))
        if group.entries_read is not None:
            out.add("pelctl_group_entries_read_total", g, group.entries_read)
        self._verdicts(out, g, group)
        self._consumers(out, g, group)

    def _verdicts(self, out: _Families, g: tuple[str, str, str], group: GroupState) -> None:
        verdicts = dict.fromkeys(VERDICTS, 0)
        for c in group.consumers:
            verdicts[c.verdict] = verdicts.get(c.verdict, 0) + 1
        for verdict, count in verdicts.items():
            out.add("pelctl_group_consumers", (*g, verdict), count)
        if group.status is not None:
            for status in STATUSES:
                out.add("pelctl_group_status", (*g, status), 1 if status == group.status else 0)

    def _consumers(self, out: _Families, g: tuple[str, str, str], group: GroupState) -> None:
        which = self.options.consumers
        if which is ConsumerSeries.none:
            return
        for c in group.consumers:
            if which is ConsumerSeries.holding and not c.pending:
                continue
            labels = (*g, label(c.name))
            out.add("pelctl_consumer_pending", labels, c.pending)
            out.add("pelctl_consumer_idle_seconds", labels, c.idle_ms / 1000.0)

    def _dlq(self, out: _Families, s: str, dlq: DlqState, now_ms: int) -> None:
        labels = (s, label(dlq.source) if dlq.source is not None else "", label(dlq.key))
        out.add("pelctl_dlq_length", labels, dlq.length)
        if dlq.oldest_ms is not None:
            out.add("pelctl_dlq_oldest_age_seconds", labels, max(0, now_ms - dlq.oldest_ms) / 1e3)
        if dlq.newest_ms is not None:
            out.add("pelctl_dlq_newest_age_seconds", labels, max(0, now_ms - dlq.newest_ms) / 1e3)
        if dlq.reasons is None:
            return
        top = self.options.dlq_reasons
        shown: dict[str, int] = {}
        other = dlq.other
        for i, (reason, count) in enumerate(dlq.reasons):
            if i < top:
                key = label(reason) if reason else NO_REASON  # none, or an empty one
                shown[key] = shown.get(key, 0) + count
            else:
                other += count
        if other:
            shown[OTHER_REASON] = shown.get(OTHER_REASON, 0) + other
        for reason, count in shown.items():
            out.add("pelctl_dlq_entries", (*labels, reason), count)
