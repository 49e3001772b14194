"""The trends of ``pelctl analyze``: fleet pending per snapshot and per hour, growth per
hour, the groups growing fastest (across every snapshot of a directory)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pelctl.spark import results as res

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row

HOUR_MS = 3_600_000


def ms_iso(ms: int | None) -> str | None:
    return None if ms is None else iso(ms)


def iso(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000.0, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def single_point_trends(group_rows: list[Row]) -> res.Trends:
    """One snapshot: the series is one point and there is no growth yet."""
    if not group_rows:
        return res.NO_TRENDS
    t = max(int(g["snapshot_ms"]) for g in group_rows)
    pending = sum(int(g["pending"]) for g in group_rows)
    return res.Trends(
        snapshot_count=1,
        series=(res.SeriesPoint(iso(t), pending, len(group_rows)),),
        hourly=(res.HourPoint(iso(t // HOUR_MS * HOUR_MS), pending, None),),
        growth_per_hour=None,
        fastest_growing=(),
    )


def fleet_trends(history: DataFrame, top: int) -> res.Trends:
    """Fleet pending per snapshot and per hour; growth per hour; the fastest-growing groups.

    Growth per hour is the least-squares slope of pending over time (``regr_slope``), so one
    odd snapshot does not dominate; it needs two snapshots at different times.
    """
    from pyspark.sql import functions as F

    h = history.select(
        "server", "stream", "group", "pending", F.unix_millis("snapshot_time").alias("t")
    )
    series_rows = (
        h.groupBy("t")
        .agg(F.sum("pending").alias("pending"), F.count(F.lit(1)).alias("group_count"))
        .orderBy("t")
        .collect()
    )
    series = tuple(
        res.SeriesPoint(iso(r["t"]), int(r["pending"] or 0), int(r["group_count"]))
        for r in series_rows
    )

    # Per hour: the last value of each group in the hour, summed over groups.
    hour = (F.col("t") / F.lit(HOUR_MS)).cast("long")
    hourly_rows = (
        h.withColumn("hour", hour)
        .groupBy("server", "stream", "group", "hour")
        .agg(F.max_by("pending", "t").alias("pending"))
        .groupBy("hour")
        .agg(F.sum("pending").alias("pending"))
        .orderBy("hour")
        .collect()
    )
    hourly = []
    prev = None
    for r in hourly_rows:
        value = int(r["pending"] or 0)
        hourly.append(
            res.HourPoint(
                iso(int(r["hour"]) * HOUR_MS), value, None if prev is None else value - prev
            )
        )
        prev = value

    hours = F.col("t") / F.lit(float(HOUR_MS))
    per_group = (
        h.groupBy("server", "stream", "group")
        .agg(
            F.regr_slope(F.col("pending").cast("double"), hours).alias("slope"),
            F.min_by("pending", "t").alias("first_pending"),
            F.max_by("pending", "t").alias("last_pending"),
            F.count(F.lit(1)).alias("snapshots"),
            F.min("t").alias("first_t"),
            F.max("t").alias("last_t"),
        )
        .where((F.col("snapshots") >= 2) & (F.col("last_t") > F.col("first_t")))
    )
    growing = (
        per_group.where(F.col("slope") > 0)
        .orderBy(F.desc("slope"), "server", "stream", "group")
        .limit(top)
        .collect()
    )
    fleet_slope = None
    if len(series) >= 2:
        xs = [int(r["t"]) / HOUR_MS for r in series_rows]
        ys = [float(r["pending"] or 0) for r in series_rows]
        fleet_slope = _slope(xs, ys)
    return res.Trends(
        snapshot_count=len(series),
        series=series,
        hourly=tuple(hourly),
        growth_per_hour=None if fleet_slope is None else round(fleet_slope, 3),
        fastest_growing=tuple(
            res.GrowingGroup(
                server=r["server"],
                stream=r["stream"],
                group=r["group"],
                growth_per_hour=round(float(r["slope"]), 3),
                first_pending=int(r["first_pending"]),
                last_pending=int(r["last_pending"]),
                snapshot_count=int(r["snapshots"]),
                first_time=ms_iso(r["first_t"]),
                last_time=ms_iso(r["last_t"]),
            )
            for r in growing
        ),
    )


def _slope(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
