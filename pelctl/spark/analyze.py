"""``pelctl analyze``: the fleet-wide PEL analysis, as Spark jobs.

Input is either a snapshot directory (``pelctl snapshot --out DIR``, any number of
snapshots) or live Redis through the ``pel`` data source (``--from-redis``). The result is an
:class:`~pelctl.spark.results.Analysis`, one frozen dataclass per section (rendered as
tables and as the HTML report; ``-o json`` is its ``asdict``, docs/schemas/analyze.json):

- ``totals``: servers, streams, groups, consumers, pending, stuck, poison, dead consumers,
  DLQ entries — of the latest snapshot of each server;
- ``groups``: per stream/group pending, consumers, lag, idle p50/p90/p99 and max, the oldest
  pending entry, max deliveries, stuck and poison counts;
- ``consumers``: stuck entries per consumer (top N);
- ``delivery_buckets``: the delivery-count distribution (exact counts per bucket), in the
  buckets and labels of ``pelctl histogram --by deliveries`` (:mod:`pelctl.core.histogram`);
- ``poison``: entries delivered at least ``poison_deliveries`` times (count + top N; the
  default is inspect's poison threshold, :data:`pelctl.core.models.POISON_DELIVERIES`);
- ``dead_consumers``: consumers holding entries that ``pelctl inspect`` would call dead
  suspects with ``--dead-after dead_after_ms`` (:mod:`pelctl.core.liveness`: below Redis 7.2
  never from idle alone); ``liveness_unknown_consumers``: those holding entries whose
  liveness the snapshot cannot tell;
- ``dlq_stats``: dead-letter entries by source stream and reason, as ``pelctl dlq stats``;
- ``trends``: across every snapshot in the directory: fleet pending per snapshot and per
  hour, fleet growth per hour, the groups growing fastest.

Counts are exact. Percentiles use Spark's ``percentile_approx`` with ``accuracy`` (default
10,000): the value returned for percentile p is an element whose rank differs from the exact
rank p·N by at most N/accuracy (for a 1,000,000-entry PEL, ±100 ranks). Below ``accuracy``
entries per group it is exact.

Only the DataFrame API is used, so the same jobs run on classic Spark and Spark Connect.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pelctl.core.histogram import DEFAULT_DELIVERY_EDGES, Bucket
from pelctl.core.liveness.verdict import DEAD_SUSPECT, DEFAULT_DEAD_AFTER_MS, UNKNOWN
from pelctl.core.models import POISON_DELIVERIES
from pelctl.render.histogram import bucket_label
from pelctl.spark import inputs
from pelctl.spark import results as res
from pelctl.spark.inputs import Tables, check_snapshot_dir, load_from_redis, release
from pelctl.spark.trends import fleet_trends, ms_iso, single_point_trends

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

    from pelctl.core import liveness

# What the CLI, the benchmarks and the tests import from here (the loaders live in
# pelctl.spark.inputs, the trends in pelctl.spark.trends).
__all__ = [
    "AnalyzeOptions",
    "Tables",
    "analyze",
    "check_snapshot_dir",
    "consumer_verdicts",
    "group_stats",
    "load_from_redis",
    "load_snapshots",
    "release",
    "trends_section",
]

DEFAULT_ACCURACY = 10_000
DEFAULT_STUCK_IDLE_MS = 300_000  # `--stuck-idle 5m`


def _delivery_buckets() -> tuple[tuple[str, int, int | None], ...]:
    """(label, min, max inclusive or None) of ``pelctl histogram --by deliveries``'s default
    buckets: ``[lo, hi)`` over :data:`~pelctl.core.histogram.DEFAULT_DELIVERY_EDGES`, from 0
    (XCLAIM ... RETRYCOUNT 0 or FORCE leaves entries delivered 0 times, so the distribution
    always adds up to the PEL size)."""
    bounds = (0, *DEFAULT_DELIVERY_EDGES)
    his = (*DEFAULT_DELIVERY_EDGES, None)
    return tuple(
        (bucket_label(Bucket(lo, hi, 0), "deliveries"), lo, None if hi is None else hi - 1)
        for lo, hi in zip(bounds, his, strict=True)
    )


DELIVERY_BUCKETS = _delivery_buckets()


@dataclass(frozen=True)
class AnalyzeOptions:
    stuck_idle_ms: int = DEFAULT_STUCK_IDLE_MS  # an entry idle this long is stuck
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS  # inspect's --dead-after
    poison_deliveries: int = POISON_DELIVERIES  # delivered this often: a poison candidate
    top: int = 20  # rows in the top-N lists
    accuracy: int = DEFAULT_ACCURACY  # percentile_approx accuracy
    since_ms: int | None = None  # trends: only snapshots this recent


# -- the jobs ------------------------------------------------------------------------------


def _key(row: Row) -> tuple[str, str, str]:
    return (row["server"], row["stream"], row["group"])


def analyze(tables: Tables, options: AnalyzeOptions | None = None) -> res.Analysis:
    """Run every job and return the result (about eight small Spark jobs)."""
    from pyspark.sql import functions as F

    o = options or AnalyzeOptions()
    t0 = time.perf_counter()
    pel = tables.pel
    per_group = group_stats(pel, o)
    pel_stats = {_key(r): r for r in per_group}

    # Job: the small tables, whole (one row per stream, group or consumer).
    group_rows = tables.groups.select(
        "server",
        "stream",
        "group",
        "consumers",
        "pending",
        "lag",
        "is_dlq",
        F.unix_millis("snapshot_time").alias("snapshot_ms"),
    ).collect()
    stream_rows = tables.streams.select("server", "stream", "is_dlq").collect()
    consumer_rows = tables.consumers.select(
        "server",
        "stream",
        "group",
        "consumer",
        "pending",
        "idle_ms",
        "inactive_ms",
        "server_version",
        "client_connected",
        "client_blocked",
    ).collect()

    groups: list[res.GroupStats] = []
    seen: set[tuple[str, str, str]] = set()
    for g in group_rows:
        key = _key(g)
        seen.add(key)
        groups.append(_group_record(key, pel_stats.get(key), g))
    for key, stats in pel_stats.items():  # PEL rows whose group row is missing (raced)
        if key not in seen:
            groups.append(_group_record(key, stats, None))
    groups.sort(key=lambda g: (-g.pending, g.server, g.stream, g.group))

    deliveries = []
    for i, (name, lo, hi) in enumerate(DELIVERY_BUCKETS):
        n = sum(int(r[f"b{i}"] or 0) for r in per_group)
        if lo or n:  # delivered 0 times: listed only when it happens
            # [lo, hi) as pelctl histogram writes it (hi here is inclusive)
            deliveries.append(res.DeliveryBucket(name, lo, None if hi is None else hi + 1, n))
    poison_total = sum(int(r["poison"] or 0) for r in per_group)
    stuck_total = sum(int(r["stuck"] or 0) for r in per_group)

    # Job: stuck entries per consumer (only consumers holding stuck entries come back).
    stuck_consumers = []
    if stuck_total:
        stuck_consumers = (
            pel.where(F.col("idle_ms") >= o.stuck_idle_ms)
            .groupBy("server", "stream", "group", "consumer")
            .agg(
                F.count(F.lit(1)).alias("stuck"),
                F.max("idle_ms").alias("max_idle_ms"),
                F.max("deliveries").alias("max_deliveries"),
            )
            .collect()
        )
    held = {
        (r["server"], r["stream"], r["group"], r["consumer"]): int(r["pending"])
        for r in consumer_rows
    }
    consumers = sorted(
        (
            res.StuckConsumer(
                r["server"],
                r["stream"],
                r["group"],
                r["consumer"],
                pending=held.get((r["server"], r["stream"], r["group"], r["consumer"])),
                stuck=int(r["stuck"]),
                max_idle_ms=int(r["max_idle_ms"]),
                max_deliveries=int(r["max_deliveries"]),
            )
            for r in stuck_consumers
        ),
        key=lambda c: (-c.stuck, c.server, c.stream, c.group, c.consumer),
    )

    # Job: the top poison candidates.
    poison_rows = []
    if poison_total:
        poison_rows = (
            pel.where(F.col("deliveries") >= o.poison_deliveries)
            .orderBy(
                F.desc("deliveries"),
                F.desc("idle_ms"),
                "server",
                "stream",
                "group",
                "id_ms",
                "id_seq",
            )
            .limit(o.top)
            .select("server", "stream", "group", "id", "consumer", "deliveries", "idle_ms")
            .collect()
        )

    # The verdict of inspect (pelctl.core.liveness) with --dead-after: below Redis 7.2 a
    # consumer quiet for long is a dead suspect only when the snapshot saw a signal (its
    # group's other workers had named clients, it had none); otherwise its liveness is unknown.
    judged = consumer_verdicts(consumer_rows, o.dead_after_ms)

    def listed(verdict: str) -> list[res.JudgedConsumer]:
        return sorted(
            (
                res.JudgedConsumer(
                    r["server"],
                    r["stream"],
                    r["group"],
                    r["consumer"],
                    r["pending"],
                    r["idle_ms"],
                    r["inactive_ms"],
                    judged[i].reason,
                )
                for i, r in enumerate(consumer_rows)
                if judged[i].verdict == verdict and (r["pending"] or 0) > 0
            ),
            key=lambda d: (-d.pending, -d.idle_ms, d.server, d.stream, d.group, d.consumer),
        )

    dead = listed(DEAD_SUSPECT)
    unknown = listed(UNKNOWN)

    # Job: dead-letter entries by source and reason (only when there is a DLQ stream).
    dlq_rows = []
    if any(r["is_dlq"] for r in stream_rows):
        dlq_rows = (
            tables.dlq.groupBy("source", "reason")
            .agg(
                F.count(F.lit(1)).alias("count"),
                F.min(F.unix_millis("dlq_at")).alias("first_ms"),
                F.max(F.unix_millis("dlq_at")).alias("last_ms"),
            )
            .collect()
        )
    dlq_stats = _dlq_section(dlq_rows, o.top)

    if tables.history_points is not None and tables.history_points <= 1:
        trends = single_point_trends(group_rows)
    else:
        trends = trends_section(tables.history, o)

    totals = res.Totals(
        server_count=len({r["server"] for r in stream_rows} | {g.server for g in groups}),
        stream_count=len(stream_rows),
        dlq_count=sum(1 for r in stream_rows if r["is_dlq"]),
        group_count=len(groups),
        consumer_count=len(consumer_rows),
        pending=sum(g.pending for g in groups),
        stuck=stuck_total,
        poison_count=poison_total,
        dead_consumer_count=len(dead),
        liveness_unknown_consumer_count=len(unknown),
        dlq_entry_count=dlq_stats.total,
        snapshot_time=ms_iso(max((g["snapshot_ms"] for g in group_rows), default=None)),
    )
    poison_groups = sorted((g for g in groups if g.poison_count), key=lambda g: -g.poison_count)
    return res.Analysis(
        input=tables.input,
        settings=res.Settings(
            stuck_min_idle_ms=o.stuck_idle_ms,
            dead_after_ms=o.dead_after_ms,
            poison_min_deliveries=o.poison_deliveries,
            top=o.top,
            accuracy=o.accuracy,
            since_ms=o.since_ms,
            rank_error=f"N/{o.accuracy}",
        ),
        totals=totals,
        groups=tuple(groups),
        consumers=tuple(consumers[: o.top]),
        stuck_consumer_count=len(consumers),
        delivery_buckets=tuple(deliveries),
        poison=res.Poison(
            min_deliveries=o.poison_deliveries,
            count=poison_total,
            by_group=tuple(
                res.PoisonGroup(g.server, g.stream, g.group, g.poison_count)
                for g in poison_groups[: o.top]
            ),
            entries=tuple(res.PoisonEntry(**r.asDict()) for r in poison_rows),
        ),
        dead_consumers=tuple(dead[: o.top]),
        dead_consumer_count=len(dead),
        liveness_unknown_consumers=tuple(unknown[: o.top]),
        dlq_stats=dlq_stats,
        trends=trends,
        duration_s=round(time.perf_counter() - t0, 3),
    )


def consumer_verdicts(rows: list[Row], dead_after_ms: int) -> list[Any]:
    """The verdict of each consumer row (same order), from what its snapshot recorded: the
    server version (7.2 semantics or not) and the client signals. Snapshots older than
    schema 3 have neither: 7.2 semantics are assumed for a server whose rows carry
    ``inactive_ms`` (only 7.2+ has it), and no client signal is taken as absent."""
    from pelctl.core import liveness
    from pelctl.redis.capabilities import Capabilities, _parse_version

    modern_servers = {r["server"] for r in rows if r["inactive_ms"] is not None}

    def modern(row: Row) -> bool:
        label = row["server_version"]
        if not label:
            return row["server"] in modern_servers
        kind, _, version = label.partition(" ")
        return Capabilities(kind, _parse_version(version)).has("consumer_inactive")

    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["server"], r["stream"], r["group"]), []).append(i)
    out: list[Any] = [None] * len(rows)
    for members in groups.values():
        facts = [
            liveness.ConsumerFacts(
                rows[i]["consumer"].encode(),
                int(rows[i]["pending"] or 0),
                int(rows[i]["idle_ms"] or 0),
                rows[i]["inactive_ms"],
            )
            for i in members
        ]
        seen = [rows[i]["client_connected"] for i in members]
        if all(v is None for v in seen):
            recorded = any(rows[i]["server_version"] for i in members)
            view = liveness.Clients(missing=liveness.CLIENT_LIST_UNAVAILABLE if recorded else None)
        else:
            view = liveness.Clients(
                frozenset(f.name for f, v in zip(facts, seen, strict=True) if v),
                # a blocked client as long as the consumer's idle: the snapshot matched it
                tuple(
                    (b"", f.idle_ms // 1000)
                    for f, i in zip(facts, members, strict=True)
                    if rows[i]["client_blocked"]
                ),
            )
        judged = liveness.judge_group(
            facts,
            modern=modern(rows[members[0]]),
            dead_after_ms=dead_after_ms,
            clients=_recorded(view),
        )
        for f, i in zip(facts, members, strict=True):
            out[i] = judged[f.name]
    return out


def _recorded(view: liveness.Clients) -> Callable[[], liveness.Clients]:
    """The clients probe of a snapshot: what was recorded, never a live server."""
    return lambda: view


def group_stats(pel: DataFrame, o: AnalyzeOptions) -> list[Row]:
    """One job, one pass over the PEL: per group the count, idle p50/p90/p99, max idle, the
    oldest entry, max deliveries, stuck and poison counts and the delivery buckets (b0..)."""
    from pyspark.sql import functions as F

    stuck = (F.col("idle_ms") >= o.stuck_idle_ms).cast("long")
    poison = (F.col("deliveries") >= o.poison_deliveries).cast("long")
    pct = F.percentile_approx("idle_ms", F.array(F.lit(0.5), F.lit(0.9), F.lit(0.99)), o.accuracy)
    bucket_sums = []
    for i, (_name, lo, hi) in enumerate(DELIVERY_BUCKETS):
        cond = F.col("deliveries") >= lo
        if hi is not None:
            cond = cond & (F.col("deliveries") <= hi)
        bucket_sums.append(F.sum(cond.cast("long")).alias(f"b{i}"))
    return (
        pel.groupBy("server", "stream", "group")
        .agg(
            F.count(F.lit(1)).alias("pending"),
            pct.alias("p"),
            F.max("idle_ms").alias("max_idle_ms"),
            F.min(F.struct("id_ms", "id_seq", "id")).alias("oldest"),
            F.max("deliveries").alias("max_deliveries"),
            F.sum(stuck).alias("stuck"),
            F.sum(poison).alias("poison"),
            F.max(F.unix_millis("snapshot_time")).alias("snapshot_ms"),
            *bucket_sums,
        )
        .collect()
    )


def _group_record(key: tuple[str, str, str], stats: Row | None, g: Row | None) -> res.GroupStats:
    server, stream, group = key
    snapshot_ms = (g["snapshot_ms"] if g is not None else None) or (
        stats["snapshot_ms"] if stats is not None else None
    )
    lag = g["lag"] if g is not None else None
    rec = res.GroupStats(
        server=server,
        stream=stream,
        group=group,
        pending=int(stats["pending"]) if stats is not None else 0,
        consumer_count=int(g["consumers"]) if g is not None else None,
        lag=int(lag) if lag is not None else None,
        idle_p50_ms=None,
        idle_p90_ms=None,
        idle_p99_ms=None,
        max_idle_ms=None,
        oldest_id=None,
        oldest_pending_age_ms=None,
        max_deliveries=None,
        stuck=0,
        poison_count=0,
        is_dlq=bool(g["is_dlq"]) if g is not None else False,
        snapshot_ms=snapshot_ms,
    )
    if stats is None or not stats["pending"]:
        return rec
    p50, p90, p99 = (int(v) for v in stats["p"])
    oldest = stats["oldest"]
    return replace(
        rec,
        idle_p50_ms=p50,
        idle_p90_ms=p90,
        idle_p99_ms=p99,
        max_idle_ms=int(stats["max_idle_ms"]),
        oldest_id=oldest["id"],
        oldest_pending_age_ms=int(snapshot_ms) - int(oldest["id_ms"]) if snapshot_ms else None,
        max_deliveries=int(stats["max_deliveries"]),
        stuck=int(stats["stuck"]),
        poison_count=int(stats["poison"]),
    )


def _dlq_section(rows: list[Row], top: int) -> res.DlqStats:
    """Counts keyed as ``pelctl dlq stats`` keys them (no source: ``(no envelope)``, no
    reason: ``(none)``), most first; the pairs keep ``null``."""
    by_source: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    pairs = []
    for r in rows:
        n = int(r["count"])
        source = res.NO_SOURCE if r["source"] is None else r["source"]
        reason = res.NO_REASON if r["reason"] is None else r["reason"]
        by_source[source] = by_source.get(source, 0) + n
        by_reason[reason] = by_reason.get(reason, 0) + n
        pairs.append(
            res.DlqPair(r["source"], r["reason"], n, ms_iso(r["first_ms"]), ms_iso(r["last_ms"]))
        )
    pairs.sort(key=lambda d: (-d.count, str(d.source), str(d.reason)))

    def most(counts: dict[str, int]) -> dict[str, int]:
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    return res.DlqStats(
        total=sum(by_source.values()),
        by_source=most(by_source),
        by_reason=dict(list(most(by_reason).items())[:top]),
        by_source_reason=tuple(pairs[:top]),
    )


def load_snapshots(spark: SparkSession, path: str, options: AnalyzeOptions | None = None) -> Tables:
    """Read a snapshot directory (:func:`pelctl.spark.inputs.load_snapshots`), the trends'
    history limited by ``options.since_ms``."""
    return inputs.load_snapshots(spark, path, since_ms=(options or AnalyzeOptions()).since_ms)


def trends_section(history: DataFrame, o: AnalyzeOptions) -> res.Trends:
    """The trends over the groups' history (:func:`pelctl.spark.trends.fleet_trends`)."""
    return fleet_trends(history, o.top)
