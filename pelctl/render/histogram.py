"""Rows, bars and JSON for ``pelctl histogram`` (shared by the CLI and the TUI).

Pure functions: no rich, no textual. Bars are text (eighth-block characters) so every
surface can draw them; the CLI colours them with rich on a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.histogram import Bucket, Histogram
from pelctl.render.protocol import Aside, Doc, Part, Record, ResultRenderer
from pelctl.render.table import Column, TableData, fmt_int

_EIGHTHS = " ▏▎▍▌▋▊▉"
UNITS = {"idle": "IDLE", "age": "AGE", "deliveries": "DELIVERIES", "consumer": "CONSUMER"}
TITLES = {
    "idle": "Idle time",
    "age": "Age (now minus the id's timestamp)",
    "deliveries": "Delivery count",
    "consumer": "Pending entries per consumer",
}


def bar(count: int, largest: int, width: int) -> str:
    """A bar ``width`` cells long for ``largest``; any non-zero count shows at least a sliver."""
    if count <= 0 or largest <= 0 or width <= 0:
        return ""
    eighths = max(1, round(count * width * 8 / largest))
    full, part = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def _duration(ms: int) -> str:
    """Bucket edges read best without zero padding: ``1m`` rather than ``1m00s``."""
    text = format_duration_ms(ms)
    for suffix in ("00s", "00m", "00h"):
        if text.endswith(suffix) and len(text) > len(suffix):
            text = text[: -len(suffix)]
    return text


def bucket_label(b: Bucket, by: str) -> str:
    if by == "consumer":
        if b.label is None:
            return f"({b.others:,} other consumers)"
        return escape(b.label)
    if by == "deliveries":
        lo = b.lo or 0
        if b.hi is None:
            return f"≥ {lo}"
        return str(lo) if b.hi - lo == 1 else f"{lo}–{b.hi - 1}"
    lo_text = _duration(b.lo or 0) if b.lo else "0"
    if b.hi is None:
        return f"≥ {lo_text}"
    return f"{lo_text} – {_duration(b.hi)}"


def percent(count: int, total: int) -> str:
    if total <= 0:
        return "-"
    value = 100.0 * count / total
    if 0 < value < 0.1:
        return "<0.1%"
    return f"{value:.1f}%"


def columns(h: Histogram, with_bar: bool = True) -> tuple[Column, ...]:
    # Narrow terminals: the bar goes first, then the share; labels (consumer names) are
    # shortened; counts stay. The CLI sizes the bar to the terminal, so it rarely goes.
    cols = (
        Column("bucket", UNITS[h.by], shrinkable=True, min_width=12),
        Column("count", "COUNT", "right"),
        Column("percent", "%", "right", priority=1),
    )
    return cols + ((Column("bar", "", style="cyan", priority=2),) if with_bar else ())


def title(h: Histogram) -> str:
    return (
        f"{TITLES[h.by]} — {escape(h.stream)} / {escape(h.group)}: "
        f"{h.total:,} pending entr{'y' if h.total == 1 else 'ies'}"
    )


def caption(h: Histogram, max_server_ms: float | None = None) -> str:
    if h.source == "summary":
        return "exact counts from the XPENDING summary (one call)"
    bound = f" (bound {max_server_ms:g} ms)" if max_server_ms else ""
    return (
        f"exact counts; {h.calls:,} server calls, longest ~{h.max_call_ms:.1f} ms{bound}, "
        f"{h.elapsed_ms / 1000:.2f} s"
    )


def table(h: Histogram, bar_width: int = 40, with_bar: bool = True) -> TableData:
    largest = max((b.count for b in h.buckets), default=0)
    rows = []
    for b in h.buckets:
        row: tuple[str, ...] = (bucket_label(b, h.by), fmt_int(b.count), percent(b.count, h.total))
        if with_bar:
            row += (bar(b.count, largest, bar_width),)
        rows.append(row)
    return TableData(columns(h, with_bar), rows, title=title(h))


def bucket_json(b: Bucket, by: str) -> dict[str, Any]:
    if by == "consumer":
        # The rest of --top: consumer null, "others" the number of consumers in it (every
        # bucket has both keys, so CSV rows keep their columns).
        return {
            "consumer": escape(b.label) if b.label is not None else None,
            "others": b.others if b.label is None else None,
            "count": b.count,
        }
    return {"lo": b.lo, "hi": b.hi, "count": b.count}


def to_json(h: Histogram) -> dict[str, Any]:
    """``{"by", "total", "buckets": [{"lo", "hi", "count"}]}``; consumer buckets carry
    ``"consumer"`` (null and ``"others"`` for the rest of ``--top``) instead of lo/hi.
    Durations are milliseconds; ``hi`` is exclusive (null for the open last bucket)."""
    return {"by": h.by, "total": h.total, "buckets": [bucket_json(b, h.by) for b in h.buckets]}


def records(h: Histogram) -> list[dict[str, Any]]:
    """Flat rows for csv/tsv/ndjson: one per bucket, with its label and share."""
    out = []
    for b in h.buckets:
        record: dict[str, Any] = {"by": h.by, "bucket": bucket_label(b, h.by)}
        record.update(bucket_json(b, h.by))
        out.append(record)
    return out


class HistogramRenderer(ResultRenderer[Histogram]):
    """``pelctl histogram``: the document (``{"by", "total", "buckets"}``); in NDJSON and CSV
    one record per bucket; on a terminal the table with bars as wide as the room left, and
    under it how the counts were made (``max_server_ms``: the bound each call kept)."""

    def __init__(self, max_server_ms: float | None = None) -> None:
        self.max_server_ms = max_server_ms

    def document(self, result: Histogram) -> dict[str, Any]:
        return to_json(result)

    def records(self, result: Histogram) -> Sequence[Record]:
        return records(result)

    def ndjson(self, result: Histogram) -> Iterable[Part]:
        return (Doc(records(result)),)

    def view(self, result: Histogram, width: int) -> Iterable[Part]:
        label_width = max((len(r[0]) for r in table(result, 0).rows), default=8)
        bar_width = max(10, min(50, width - label_width - 30))
        return (table(result, bar_width), Aside(caption(result, self.max_server_ms)))
