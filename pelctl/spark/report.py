"""Presenting an analysis: terminal tables and a self-contained HTML report.

Pure functions of :class:`pelctl.spark.results.Analysis` (no Spark). The page is the Jinja2
template ``templates/report.html.j2`` (autoescape on) with inline CSS and static SVG charts
drawn by pygal: no JavaScript (pygal's inline config script is removed by an XML filter),
no fonts or images from anywhere, so it opens offline and can be mailed or attached to an
incident. Every text in it goes through :func:`_e` (control characters escaped, then
HTML-escaped); chart labels go through :func:`pelctl.base.binary.clean` and pygal's XML
serializer escapes them: names and reasons are data, never markup.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from pelctl.base.binary import clean
from pelctl.base.durations import format_duration_ms
from pelctl.render.table import Column, TableData, fmt_int
from pelctl.spark.results import Analysis, GroupStats, GrowingGroup

if TYPE_CHECKING:
    from jinja2 import Template
    from markupsafe import Markup

PALETTE = ("#2563eb", "#f59e0b", "#dc2626", "#16a34a", "#7c3aed", "#0891b2", "#db2777")
FONT = "system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"
LABEL_WIDTH = 30  # chart labels are cut here (the full name is in the tables)


def _dur(ms: int | None) -> str:
    return "-" if ms is None else format_duration_ms(int(ms))


def _name(d: GroupStats | GrowingGroup, multi_server: bool) -> str:
    base = f"{d.stream} / {d.group}"
    return f"{d.server} {base}" if multi_server else base


# -- terminal tables -------------------------------------------------------------------------


def tables(result: Analysis) -> list[tuple[TableData, list[dict[str, Any]]]]:
    """The sections as (TableData for text formats, records for csv/json)."""
    multi = result.multi_server
    out: list[tuple[TableData, list[dict[str, Any]]]] = []
    t = result.totals
    cols = tuple(
        Column(k, label, "right")
        for k, label in (
            ("server_count", "servers"),
            ("stream_count", "streams"),
            ("group_count", "groups"),
            ("consumer_count", "consumers"),
            ("pending", "pending"),
            ("stuck", "stuck"),
            ("poison_count", "poison"),
            ("dead_consumer_count", "dead consumers"),
            ("dlq_entry_count", "dlq entries"),
        )
    )
    out.append(
        (
            TableData(
                cols,
                [tuple(fmt_int(getattr(t, c.key)) for c in cols)],
                title=f"Fleet at {t.snapshot_time or '-'}",
            ),
            [asdict(t)],
        )
    )

    server_col = (Column("server", "SERVER"),) if multi else ()
    gcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("pending", "PENDING", "right"),
        Column("consumer_count", "CONSUMERS", "right"),
        Column("idle_p50_ms", "IDLE P50", "right"),
        Column("idle_p90_ms", "P90", "right"),
        Column("idle_p99_ms", "P99", "right"),
        Column("oldest_pending_age_ms", "OLDEST", "right"),
        Column("max_deliveries", "MAX DELIV", "right"),
        Column("stuck", "STUCK", "right"),
        Column("poison_count", "POISON", "right"),
    )
    out.append(
        (
            TableData(
                gcols,
                [_cells(gcols, g) for g in result.groups],
                title="Groups",
                row_styles=[
                    "red" if g.poison_count else "yellow" if g.stuck else None
                    for g in result.groups
                ],
                caption=None if result.groups else "no consumer groups",
            ),
            _records(result.groups),
        )
    )

    ccols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("consumer", "CONSUMER"),
        Column("stuck", "STUCK", "right"),
        Column("pending", "PENDING", "right"),
        Column("max_idle_ms", "MAX IDLE", "right"),
        Column("max_deliveries", "MAX DELIV", "right"),
    )
    stuck_min = _dur(result.settings.stuck_min_idle_ms)
    out.append(
        (
            TableData(
                ccols,
                [_cells(ccols, r) for r in result.consumers],
                title=f"Stuck entries per consumer (idle >= {stuck_min})",
                caption=None if result.consumers else "nothing stuck",
            ),
            _records(result.consumers),
        )
    )

    dcols = (Column("bucket", "DELIVERIES"), Column("count", "ENTRIES", "right"))
    out.append(
        (
            TableData(
                dcols,
                [_cells(dcols, r) for r in result.delivery_buckets],
                title="Delivery-count distribution",
            ),
            _records(result.delivery_buckets),
        )
    )

    p = result.poison
    pcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("id", "ID"),
        Column("consumer", "CONSUMER"),
        Column("deliveries", "DELIVERIES", "right"),
        Column("idle_ms", "IDLE", "right"),
    )
    out.append(
        (
            TableData(
                pcols,
                [_cells(pcols, r) for r in p.entries],
                title=f"Poison candidates (delivered >= {p.min_deliveries} times): {p.count:,}",
                caption=None if p.entries else "none",
            ),
            _records(p.entries),
        )
    )

    kcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("consumer", "CONSUMER"),
        Column("pending", "PENDING", "right"),
        Column("idle_ms", "IDLE", "right"),
    )
    dead_after = _dur(result.settings.dead_after_ms)
    out.append(
        (
            TableData(
                kcols,
                [_cells(kcols, r) for r in result.dead_consumers],
                title=f"Dead consumers (holding entries, dead suspects at --dead-after "
                f"{dead_after})",
                caption=_unknown_caption(result, bool(result.dead_consumers)),
            ),
            _records(result.dead_consumers),
        )
    )

    q = result.dlq_stats
    qcols = (
        Column("source", "SOURCE"),
        Column("reason", "REASON"),
        Column("count", "ENTRIES", "right"),
        Column("last_at", "LAST"),
    )
    out.append(
        (
            TableData(
                qcols,
                [_cells(qcols, r) for r in q.by_source_reason],
                title=f"Dead-letter entries by source and reason: {q.total:,}",
                caption=None if q.by_source_reason else "no dead-letter entries",
            ),
            _records(q.by_source_reason),
        )
    )

    tr = result.trends
    n = tr.snapshot_count
    title = f"Trends over {n} snapshot{'s' if n != 1 else ''}"
    if tr.growth_per_hour is not None:
        title += f": fleet PEL {tr.growth_per_hour:+,.1f} entries/hour"
    tcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("growth_per_hour", "GROWTH/H", "right"),
        Column("first_pending", "FIRST", "right"),
        Column("last_pending", "LAST", "right"),
        Column("snapshot_count", "SNAPSHOTS", "right"),
    )
    caption = None
    if not tr.fastest_growing:
        caption = (
            "no group is growing"
            if tr.snapshot_count >= 2
            else "trends need two snapshots or more (run pelctl snapshot again later)"
        )
    out.append(
        (
            TableData(
                tcols,
                [_cells(tcols, r) for r in tr.fastest_growing],
                title=title + " — fastest-growing groups",
                caption=caption,
            ),
            _records(tr.fastest_growing),
        )
    )
    return out


def _records(items: Sequence[Any]) -> list[dict[str, Any]]:
    return [asdict(item) for item in items]


def _cells(columns: Sequence[Column], record: object) -> tuple[str, ...]:
    cells = []
    for c in columns:
        v = getattr(record, c.key)
        if c.key.endswith("_ms"):
            cells.append(_dur(v))
        elif isinstance(v, float):
            cells.append(f"{v:+,.1f}")
        elif isinstance(v, int) and not isinstance(v, bool):
            cells.append(fmt_int(v))
        else:
            cells.append("-" if v is None else str(v))
    return tuple(cells)


# -- charts (pygal) ---------------------------------------------------------------------------


def _e(text: object) -> str:
    """The one escaping function of the HTML surface (the template's ``finalize``)."""
    from markupsafe import Markup

    if isinstance(text, Markup):
        return text
    return Markup(html.escape(clean("" if text is None else str(text)), quote=True))


def _label(text: str) -> str:
    text = clean(text)
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"


def _short(n: float) -> str:
    n = float(n)
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.1f}".rstrip("0").rstrip(".") + unit
    return f"{n:.0f}" if n == int(n) else f"{n:.1f}"


def _static(root: Any) -> Any:
    """pygal XML filter: drop its inline config ``<script>`` (only its tooltips JS reads it;
    ``js=[]`` loads none) and its comments (links to pygal.org): a static, offline SVG."""
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag.rpartition("}")[2] == "script" or not tag:
                parent.remove(child)
    return root


def _chart(kind: str, title: str, colors: Sequence[str], opacity: str = "1", **config: Any) -> Any:
    import pygal
    from pygal.style import Style

    style = Style(
        colors=tuple(colors),
        font_family=FONT,
        background="#ffffff",
        plot_background="#ffffff",
        opacity=opacity,  # bars: 1, the exact palette colour
        opacity_hover=opacity,
        title_font_size=13,
        label_font_size=10,
        major_label_font_size=10,
        value_font_size=10,
        legend_font_size=11,
        no_data_font_size=12,
        transition="0s",
    )
    settings: dict[str, Any] = {"show_legend": False, "margin": 8, "spacing": 6, **config}
    chart = getattr(pygal, kind)(
        title=clean(title),
        style=style,
        disable_xml_declaration=True,
        js=[],
        no_data_text="no data",
        explicit_size=True,  # width and height on the <svg>: it keeps its size in a flex row
        truncate_label=-1,  # labels are cut here (_label), numbers never
        **settings,
    )
    chart.add_xml_filter(_static)
    return chart


def _svg(chart: Any) -> Markup:
    from markupsafe import Markup

    return Markup(chart.render())  # escaped by pygal's XML serializer


def hbar_chart(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    width: int = 520,
    color: str = PALETTE[0],
    value_label: Callable[[float], str] = _short,
) -> Markup:
    """Horizontal bars, one per (label, value), the first on top."""
    chart = _chart(
        "HorizontalBar",
        title,
        (color,),
        width=width,
        height=60 + 26 * max(len(items), 1),
        print_values=True,
        print_values_position="top",
        value_formatter=value_label,
        show_y_guides=False,
    )
    chart.x_labels = [_label(label) for label, _ in reversed(items)]
    chart.add(clean(title), [v for _, v in reversed(items)])
    return _svg(chart)


def vbar_chart(
    items: Sequence[tuple[str, float]], *, title: str, width: int = 520, color: str = PALETTE[1]
) -> Markup:
    """Vertical bars (a distribution), in the order given."""
    chart = _chart(
        "Bar",
        title,
        (color,),
        width=width,
        height=260,
        print_values=True,
        print_values_position="top",
        value_formatter=_short,
        x_title="deliveries",
    )
    chart.x_labels = [_label(label) for label, _ in items]
    chart.add(clean(title), [v for _, v in items])
    return _svg(chart)


def percentile_chart(
    items: Sequence[tuple[str, int, int, int]], *, title: str, width: int = 520
) -> Markup:
    """Per group: idle p50, p90 and p99 as three bars (a linear scale, durations)."""
    chart = _chart(
        "HorizontalBar",
        title,
        PALETTE[:3],
        width=width,
        height=80 + 34 * max(len(items), 1),
        value_formatter=_dur,
        x_labels_major_count=6,  # durations are wide: 13 auto labels ran into each other
        show_minor_x_labels=False,
        show_legend=True,
        legend_at_bottom=True,
        legend_at_bottom_columns=3,
    )
    rows = list(reversed(items))
    chart.x_labels = [_label(label) for label, *_ in rows]
    for j, name in enumerate(("p50", "p90", "p99")):
        chart.add(name, [values[j] for _, *values in rows])
    return _svg(chart)


def line_chart(
    points: Sequence[tuple[int, float]], *, title: str, width: int = 1110, note: str = ""
) -> Markup:
    """A time series (x: epoch ms, y: value) with dots on each point."""
    span = (max(p[0] for p in points) - min(p[0] for p in points)) if points else 0
    chart = _chart(
        "Line",
        title + (f" — {note}" if note else ""),
        (PALETTE[0],),
        opacity=".15",  # the area under the line
        width=width,
        height=240,
        fill=True,
        dots_size=3.5,
        value_formatter=lambda v: f"{v:,.0f}",
        show_minor_x_labels=False,
        x_labels_major_count=5,
    )
    chart.x_labels = [_time_label(x, span) for x, _ in points]
    chart.add("pending", [y for _, y in points])
    return _svg(chart)


def _time_label(ms: int, span: int) -> str:
    t = datetime.fromtimestamp(ms / 1000.0, UTC)  # reports are in UTC, like the data
    if not span:
        return t.strftime("%Y-%m-%d %H:%M:%S UTC")
    if span < 600_000:
        return t.strftime("%H:%M:%S")
    if span < 86_400_000:
        return t.strftime("%H:%M")
    return t.strftime("%m-%d %H:%M")


# -- the HTML report -------------------------------------------------------------------------


@cache
def _template() -> Template:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("pelctl.spark", "templates"),
        autoescape=True,
        finalize=_e,
        undefined=StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    env.globals.update(zip=zip, duration=_dur)
    return env.get_template("report.html.j2")


def html_report(result: Analysis, *, title: str = "pelctl fleet report") -> str:
    """The whole report as one HTML document (inline CSS and SVG, nothing external)."""
    t = result.totals
    multi = result.multi_server
    cards = [
        ("servers", fmt_int(t.server_count), ""),
        ("streams", fmt_int(t.stream_count), ""),
        ("groups", fmt_int(t.group_count), ""),
        ("consumers", fmt_int(t.consumer_count), ""),
        ("pending", fmt_int(t.pending), ""),
        ("stuck", fmt_int(t.stuck), "warn" if t.stuck else ""),
        ("poison", fmt_int(t.poison_count), "bad" if t.poison_count else ""),
        ("dead consumers", fmt_int(t.dead_consumer_count), "bad" if t.dead_consumer_count else ""),
        ("DLQ entries", fmt_int(t.dlq_entry_count), "warn" if t.dlq_entry_count else ""),
    ]
    tr = result.trends
    series = [(_parse_ms(p.snapshot_time), float(p.pending)) for p in tr.series]
    note = (
        f"{tr.growth_per_hour:+,.1f} entries/hour"
        if tr.growth_per_hour is not None
        else ("one snapshot so far" if len(series) == 1 else "")
    )
    top = result.groups[:15]
    charts = [
        hbar_chart(
            [(_name(g, multi), g.pending) for g in top if g.pending],
            title="Pending entries by group (top 15)",
        ),
        percentile_chart(
            [
                (_name(g, multi), g.idle_p50_ms, g.idle_p90_ms, g.idle_p99_ms)
                for g in top
                if g.idle_p50_ms is not None
                and g.idle_p90_ms is not None
                and g.idle_p99_ms is not None
            ][:10],
            title="Idle time per group: p50 / p90 / p99",
        ),
        vbar_chart(
            [(d.bucket, d.count) for d in result.delivery_buckets],
            title="Delivery-count distribution",
        ),
        hbar_chart(
            [(f"{c.consumer} ({c.stream}/{c.group})", c.stuck) for c in result.consumers[:12]],
            title=f"Stuck entries per consumer (idle >= {_dur(result.settings.stuck_min_idle_ms)})",
            color=PALETTE[2],
        ),
        hbar_chart(
            list(result.dlq_stats.by_reason.items())[:10],
            title="Dead-letter entries by reason",
            color=PALETTE[4],
        ),
        hbar_chart(
            [(_name(g, multi), g.growth_per_hour) for g in tr.fastest_growing[:10]],
            title="Fastest-growing groups (entries/hour)",
            color=PALETTE[3],
            value_label=lambda v: f"+{_short(v)}/h",
        ),
    ]
    return _template().render(
        title=title,
        result=result,
        cards=cards,
        trend_chart=line_chart(series, title="Fleet PEL size over snapshots", note=note),
        charts=charts,
        tables=[data for data, _records in tables(result)[1:]],
        row_limit=50,
    )


def _parse_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _unknown_caption(result: Analysis, any_dead: bool) -> str | None:
    """The dead-consumers table's caption: also how many consumers holding entries have an
    unknown liveness (below Redis 7.2 idle alone proves nothing; pelctl.core.liveness)."""
    n = result.totals.liveness_unknown_consumer_count
    if not n:
        return None if any_dead else "none"
    return (
        f"{n:,} more consumer{'s' if n != 1 else ''} holding entries: liveness unknown "
        "(Redis < 7.2, no signal either way)"
    )
