"""The result of ``pelctl analyze``: one frozen dataclass per section.

:func:`pelctl.spark.analyze.analyze` builds an :class:`Analysis`; the terminal tables and
the HTML report (:mod:`pelctl.spark.report`) read its attributes; ``-o json`` is
:meth:`Analysis.to_json` (``dataclasses.asdict``), so the field names here are the keys of
the JSON document, in order (docs/spark.md, docs/schemas/analyze.json). They speak the one
JSON vocabulary (docs/formats.md): a number of things ends in ``_count`` and the plural
without it is a list, ``source`` is a dead letter's source stream, ``deliveries`` one
entry's delivery count. No Spark, no UI library.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Input:
    """Where the data came from: a snapshot directory or live servers (redacted URLs)."""

    kind: str  # "snapshots" | "redis"
    path: str | None = None
    snapshot_count: int | None = None  # distinct snapshots in the directory
    latest: dict[str, str] | None = None  # server -> its latest snapshot partition
    servers: tuple[str, ...] | None = None

    @property
    def where(self) -> str:
        return self.path or ", ".join(self.servers or ()) or "-"


@dataclass(frozen=True)
class Settings:
    stuck_min_idle_ms: int  # --stuck-idle: an entry idle this long is stuck
    dead_after_ms: int
    poison_min_deliveries: int  # --poison-deliveries
    top: int
    accuracy: int
    since_ms: int | None
    percentile: str = "percentile_approx"
    rank_error: str = ""  # "N/<accuracy>" unless given

    def __post_init__(self) -> None:
        if not self.rank_error:
            object.__setattr__(self, "rank_error", f"N/{self.accuracy}")


@dataclass(frozen=True)
class Totals:
    """The fleet, from the latest snapshot of each server."""

    server_count: int
    stream_count: int
    dlq_count: int  # dead-letter streams
    group_count: int
    consumer_count: int
    pending: int
    stuck: int
    poison_count: int
    dead_consumer_count: int
    liveness_unknown_consumer_count: int
    dlq_entry_count: int
    snapshot_time: str | None


@dataclass(frozen=True)
class GroupStats:
    server: str
    stream: str
    group: str
    pending: int
    consumer_count: int | None
    lag: int | None
    idle_p50_ms: int | None
    idle_p90_ms: int | None
    idle_p99_ms: int | None
    max_idle_ms: int | None
    oldest_id: str | None
    oldest_pending_age_ms: int | None
    max_deliveries: int | None
    stuck: int
    poison_count: int
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
    """A bucket of ``pelctl histogram --by deliveries``: its label and [lo, hi)."""

    bucket: str  # the label the histogram shows
    lo: int  # inclusive
    hi: int | None  # exclusive; None: open
    count: int


@dataclass(frozen=True)
class PoisonGroup:
    server: str
    stream: str
    group: str
    poison_count: int


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


# The map keys ``pelctl dlq stats`` uses for an entry without a source / a reason.
NO_SOURCE = "(no envelope)"
NO_REASON = "(none)"


@dataclass(frozen=True)
class DlqPair:
    source: str | None
    reason: str | None
    count: int
    first_at: str | None
    last_at: str | None


@dataclass(frozen=True)
class DlqStats:
    """Dead-letter entries counted as ``pelctl dlq stats`` counts them (``total``,
    ``by_source`` and ``by_reason`` maps, most first), plus (source, reason) pairs."""

    total: int
    by_source: dict[str, int]
    by_reason: dict[str, int]  # the top N
    by_source_reason: tuple[DlqPair, ...]


@dataclass(frozen=True)
class SeriesPoint:
    snapshot_time: str
    pending: int
    group_count: int


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
    snapshot_count: int
    first_time: str | None
    last_time: str | None


@dataclass(frozen=True)
class Trends:
    snapshot_count: int
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
    input: Input
    settings: Settings
    totals: Totals
    groups: tuple[GroupStats, ...]
    consumers: tuple[StuckConsumer, ...]  # the top N
    stuck_consumer_count: int  # all consumers holding stuck entries
    delivery_buckets: tuple[DeliveryBucket, ...]
    poison: Poison
    dead_consumers: tuple[JudgedConsumer, ...]  # the top N
    dead_consumer_count: int
    liveness_unknown_consumers: tuple[JudgedConsumer, ...]  # the top N
    dlq_stats: DlqStats
    trends: Trends
    duration_s: float
    timings: Timings | None = field(default=None)  # set by the CLI around the Spark run

    @property
    def multi_server(self) -> bool:
        return self.totals.server_count > 1

    def to_json(self) -> dict[str, Any]:
        """The ``-o json`` document: the fields in order; the unset parts of ``input`` and
        ``timings`` are left out (a snapshot directory has no ``servers``, and so on)."""
        doc = asdict(self)
        doc["input"] = {k: v for k, v in doc["input"].items() if v is not None}
        if doc["timings"] is None:
            del doc["timings"]
        return doc


def record(item: Any) -> dict[str, Any]:
    """One row of a section as a plain dict (csv / json records)."""
    return asdict(item)
