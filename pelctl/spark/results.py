"""The result of ``pelctl analyze``: one frozen dataclass per section.

:func:`pelctl.spark.analyze.analyze` builds an :class:`Analysis`; the terminal tables and
the HTML report (:mod:`pelctl.spark.report`) read its attributes; ``-o json`` is
:meth:`Analysis.to_json` (``dataclasses.asdict``), so the field order here is the key order
of the JSON document (documented in docs/spark.md). No Spark, no UI library.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Source:
    """Where the data came from: a snapshot directory or live servers (redacted URLs)."""

    kind: str  # "snapshots" | "redis"
    path: str | None = None
    snapshots: int | None = None  # distinct snapshots in the directory
    latest: dict[str, str] | None = None  # server -> its latest snapshot partition
    servers: tuple[str, ...] | None = None

    @property
    def where(self) -> str:
        return self.path or ", ".join(self.servers or ()) or "-"


@dataclass(frozen=True)
class Settings:
    stuck_idle_ms: int
    dead_after_ms: int
    poison_deliveries: int
    top: int
    accuracy: int
    since_ms: int | None
    percentile: str = "percentile_approx"
    rank_error: str = ""


@dataclass(frozen=True)
class Totals:
    """The fleet, from the latest snapshot of each server."""

    servers: int
    streams: int
    dlq_streams: int
    groups: int
    consumers: int
    pending: int
    stuck: int
    poison: int
    dead_consumers: int
    liveness_unknown: int
    dlq_entries: int
    snapshot_time: str | None


@dataclass(frozen=True)
class GroupStats:
    server: str
    stream: str
    group: str
    pending: int
    consumers: int | None
    lag: int | None
    idle_p50_ms: int | None
    idle_p90_ms: int | None
    idle_p99_ms: int | None
    max_idle_ms: int | None
    oldest_id: str | None
    oldest_age_ms: int | None
    max_deliveries: int | None
    stuck: int
    poison: int
    is_dlq: bool
    snapshot_ms: int | None


@dataclass(frozen=True)
class StuckConsumer:
    server: str
    stream: str
    group: str
    consumer: str
    pending: int | None
    stuck: int
    max_idle_ms: int
    max_deliveries: int


@dataclass(frozen=True)
class DeliveryBucket:
    bucket: str  # the label ``pelctl histogram --by deliveries`` shows
    min: int  # inclusive
    max: int | None  # inclusive; None: open
    entries: int


@dataclass(frozen=True)
class PoisonGroup:
    server: str
    stream: str
    group: str
    entries: int


@dataclass(frozen=True)
class PoisonEntry:
    server: str
    stream: str
    group: str
    id: str
    consumer: str
    deliveries: int
    idle_ms: int


@dataclass(frozen=True)
class Poison:
    min_deliveries: int
    count: int
    by_group: tuple[PoisonGroup, ...]
    entries: tuple[PoisonEntry, ...]


@dataclass(frozen=True)
class JudgedConsumer:
    """A consumer holding entries, with the verdict's reason (:mod:`pelctl.core.liveness`)."""

    server: str
    stream: str
    group: str
    consumer: str
    pending: int
    idle_ms: int
    inactive_ms: int | None
    verdict_reason: str


@dataclass(frozen=True)
class DlqBySource:
    source: str | None
    entries: int


@dataclass(frozen=True)
class DlqByReason:
    reason: str | None
    entries: int


@dataclass(frozen=True)
class DlqPair:
    source: str | None
    reason: str | None
    entries: int
    first_at: str | None
    last_at: str | None


@dataclass(frozen=True)
class Dlq:
    entries: int
    by_source: tuple[DlqBySource, ...]
    by_reason: tuple[DlqByReason, ...]
    by_source_reason: tuple[DlqPair, ...]


@dataclass(frozen=True)
class SeriesPoint:
    snapshot_time: str
    pending: int
    groups: int


@dataclass(frozen=True)
class HourPoint:
    hour: str
    pending: int
    change: int | None


@dataclass(frozen=True)
class GrowingGroup:
    server: str
    stream: str
    group: str
    growth_per_hour: float
    first_pending: int
    last_pending: int
    snapshots: int
    first_time: str | None
    last_time: str | None


@dataclass(frozen=True)
class Trends:
    snapshots: int
    series: tuple[SeriesPoint, ...]
    hourly: tuple[HourPoint, ...]
    growth_per_hour: float | None
    fastest_growing: tuple[GrowingGroup, ...]


NO_TRENDS = Trends(0, (), (), None, ())


@dataclass(frozen=True)
class Timings:
    spark_start_s: float
    analyze_s: float


@dataclass(frozen=True)
class Analysis:
    source: Source
    settings: Settings
    totals: Totals
    groups: tuple[GroupStats, ...]
    consumers: tuple[StuckConsumer, ...]  # the top N
    consumers_with_stuck: int
    deliveries: tuple[DeliveryBucket, ...]
    poison: Poison
    dead_consumers: tuple[JudgedConsumer, ...]  # the top N
    dead_consumers_total: int
    liveness_unknown_consumers: tuple[JudgedConsumer, ...]
    dlq: Dlq
    trends: Trends
    elapsed_s: float
    timings: Timings | None = field(default=None)  # set by the CLI around the Spark run

    @property
    def multi_server(self) -> bool:
        return self.totals.servers > 1

    def to_json(self) -> dict[str, Any]:
        """The ``-o json`` document: the fields in order; the unset parts of ``source`` and
        ``timings`` are left out (a snapshot source has no ``servers``, and so on)."""
        doc = asdict(self)
        doc["source"] = {k: v for k, v in doc["source"].items() if v is not None}
        if doc["timings"] is None:
            del doc["timings"]
        return doc


def record(item: Any) -> dict[str, Any]:
    """One row of a section as a plain dict (csv / json records)."""
    return asdict(item)
