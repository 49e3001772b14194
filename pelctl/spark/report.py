"""Presenting an analysis: terminal tables and a self-contained HTML report.

Pure functions of the result document of :func:`pelctl.spark.analyze.analyze` (no Spark):
the HTML has inline CSS and inline SVG charts drawn here, no JavaScript, no fonts or
images from anywhere, so it opens offline and can be mailed or attached to an incident.
Every text in it goes through :func:`_e` (control characters escaped, then HTML-escaped):
names and reasons are data, never markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pelctl.base.binary import clean
from pelctl.base.durations import format_duration_ms
from pelctl.render.table import Column, TableData, fmt_int

PALETTE = ("#2563eb", "#f59e0b", "#dc2626", "#16a34a", "#7c3aed", "#0891b2", "#db2777")
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"


def _dur(ms: int | None) -> str:
    return "-" if ms is None else format_duration_ms(int(ms))


def _name(d: dict[str, Any], multi_server: bool) -> str:
    base = f"{d['stream']} / {d['group']}"
    return f"{d['server']} {base}" if multi_server else base


def _multi(result: dict[str, Any]) -> bool:
    return (result.get("totals") or {}).get("servers", 1) > 1


# -- terminal tables -------------------------------------------------------------------------


def tables(result: dict[str, Any]) -> list[tuple[TableData, list[dict[str, Any]]]]:
    """The sections as (TableData for text formats, records for csv/json)."""
    multi = _multi(result)
    out: list[tuple[TableData, list[dict[str, Any]]]] = []
    t = result["totals"]
    cols = tuple(
        Column(k, k.replace("_", " "), "right")
        for k in (
            "servers",
            "streams",
            "groups",
            "consumers",
            "pending",
            "stuck",
            "poison",
            "dead_consumers",
            "dlq_entries",
        )
    )
    out.append(
        (
            TableData(
                cols,
                [tuple(fmt_int(t.get(c.key)) for c in cols)],
                title=f"Fleet at {t.get('snapshot_time') or '-'}",
            ),
            [t],
        )
    )

    server_col = (Column("server", "SERVER"),) if multi else ()
    gcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("pending", "PENDING", "right"),
        Column("consumers", "CONSUMERS", "right"),
        Column("idle_p50_ms", "IDLE P50", "right"),
        Column("idle_p90_ms", "P90", "right"),
        Column("idle_p99_ms", "P99", "right"),
        Column("oldest_age_ms", "OLDEST", "right"),
        Column("max_deliveries", "MAX DELIV", "right"),
        Column("stuck", "STUCK", "right"),
        Column("poison", "POISON", "right"),
    )
    rows = []
    styles: list[str | None] = []
    for g in result["groups"]:
        cells = []
        for c in gcols:
            v = g.get(c.key)
            if c.key.endswith("_ms"):
                cells.append(_dur(v))
            elif isinstance(v, int) and not isinstance(v, bool):
                cells.append(fmt_int(v))
            else:
                cells.append("-" if v is None else str(v))
        rows.append(tuple(cells))
        styles.append("red" if g.get("poison") else "yellow" if g.get("stuck") else None)
    out.append(
        (
            TableData(
                gcols,
                rows,
                title="Groups",
                row_styles=styles,
                caption=None if rows else "no consumer groups",
            ),
            result["groups"],
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
    stuck_min = _dur(result["settings"]["stuck_idle_ms"])
    out.append(
        (
            TableData(
                ccols,
                [_cells(ccols, r) for r in result["consumers"]],
                title=f"Stuck entries per consumer (idle >= {stuck_min})",
                caption=None if result["consumers"] else "nothing stuck",
            ),
            result["consumers"],
        )
    )

    dcols = (Column("bucket", "DELIVERIES"), Column("entries", "ENTRIES", "right"))
    out.append(
        (
            TableData(
                dcols,
                [_cells(dcols, r) for r in result["deliveries"]],
                title="Delivery-count distribution",
            ),
            result["deliveries"],
        )
    )

    p = result["poison"]
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
                [_cells(pcols, r) for r in p["entries"]],
                title=f"Poison candidates (delivered >= {p['min_deliveries']} times): "
                f"{p['count']:,}",
                caption=None if p["entries"] else "none",
            ),
            p["entries"],
        )
    )

    kcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("consumer", "CONSUMER"),
        Column("pending", "PENDING", "right"),
        Column("idle_ms", "IDLE", "right"),
    )
    dead_after = _dur(result["settings"]["dead_after_ms"])
    out.append(
        (
            TableData(
                kcols,
                [_cells(kcols, r) for r in result["dead_consumers"]],
                title=f"Dead consumers (holding entries, dead suspects at --dead-after "
                f"{dead_after})",
                caption=_unknown_caption(result, bool(result["dead_consumers"])),
            ),
            result["dead_consumers"],
        )
    )

    q = result["dlq"]
    qcols = (
        Column("source", "SOURCE"),
        Column("reason", "REASON"),
        Column("entries", "ENTRIES", "right"),
        Column("last_at", "LAST"),
    )
    out.append(
        (
            TableData(
                qcols,
                [_cells(qcols, r) for r in q["by_source_reason"]],
                title=f"Dead-letter entries by source and reason: {q['entries']:,}",
                caption=None if q["by_source_reason"] else "no dead-letter entries",
            ),
            q["by_source_reason"],
        )
    )

    tr = result["trends"]
    growth = tr.get("growth_per_hour")
    title = f"Trends over {tr['snapshots']} snapshot{'s' if tr['snapshots'] != 1 else ''}"
    if growth is not None:
        title += f": fleet PEL {growth:+,.1f} entries/hour"
    tcols = server_col + (
        Column("stream", "STREAM"),
        Column("group", "GROUP"),
        Column("growth_per_hour", "GROWTH/H", "right"),
        Column("first_pending", "FIRST", "right"),
        Column("last_pending", "LAST", "right"),
        Column("snapshots", "SNAPSHOTS", "right"),
    )
    caption = None
    if not tr["fastest_growing"]:
        caption = (
            "no group is growing"
            if tr["snapshots"] >= 2
            else "trends need two snapshots or more (run pelctl snapshot again later)"
        )
    out.append(
        (
            TableData(
                tcols,
                [_cells(tcols, r) for r in tr["fastest_growing"]],
                title=title + " — fastest-growing groups",
                caption=caption,
            ),
            tr["fastest_growing"],
        )
    )
    return out


def _cells(columns: Sequence[Column], record: dict[str, Any]) -> tuple[str, ...]:
    cells = []
    for c in columns:
        v = record.get(c.key)
        if c.key.endswith("_ms"):
            cells.append(_dur(v))
        elif isinstance(v, float):
            cells.append(f"{v:+,.1f}")
        elif isinstance(v, int) and not isinstance(v, bool):
            cells.append(fmt_int(v))
        else:
            cells.append("-" if v is None else str(v))
    return tuple(cells)


# -- SVG charts ------------------------------------------------------------------------------


def _e(text: Any) -> str:
    """The one escaping function of the HTML surface."""
    return html.escape(clean("" if text is None else str(text)), quote=True)


def _axis(value: float) -> tuple[float, int]:
    """(axis maximum, number of intervals): round steps (1, 2, 2.5, 5 x 10^k), 1-4 of them."""
    if value <= 0:
        return 1.0, 1
    raw = value / 4
    exp = 10 ** math.floor(math.log10(raw))
    step = 10 * exp
    for m in (1, 2, 2.5, 5):
        if m * exp >= raw:
            step = m * exp
            break
    if value >= 1 and step < 1:
        step = 1.0  # counts: no fractional ticks
    n = max(1, math.ceil(value / step - 1e-9))
    return step * n, n


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for m in (1, 2, 2.5, 5, 10):
        if value <= m * exp:
            return m * exp
    return 10 * exp


_DURATION_STEPS_MS = (
    1_000,
    2_000,
    5_000,
    10_000,
    15_000,
    30_000,
    60_000,
    120_000,
    300_000,
    600_000,
    900_000,
    1_800_000,
    3_600_000,
    7_200_000,
    10_800_000,
    21_600_000,
    43_200_000,
    86_400_000,
    172_800_000,
    604_800_000,
)


def _nice_duration_max(value: float) -> float:
    """The smallest 4 x (a round duration) that is >= value, so ticks read 15m, 30m, ..."""
    for step in _DURATION_STEPS_MS:
        if value <= 4 * step:
            return 4 * step
    return _nice_max(value)


def _short(n: float) -> str:
    n = float(n)
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.1f}".rstrip("0").rstrip(".") + unit
    return f"{n:.0f}" if n == int(n) else f"{n:.1f}"


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def hbar_chart(
    items: Sequence[tuple[str, float]],
    *,
    title: str,
    width: int = 520,
    color: str = PALETTE[0],
    value_label: Any = _short,
) -> str:
    """Horizontal bars, one per (label, value), largest first as given."""
    if not items:
        return _empty_chart(title, width)
    label_w, bar_h, gap, top = 180, 20, 6, 34
    height = top + len(items) * (bar_h + gap) + 24
    vmax, n = _axis(max(v for _, v in items))
    plot_w = width - label_w - 70
    parts = [_svg_open(width, height, title), _title(title)]
    for i in range(n + 1):
        x = label_w + plot_w * i / n
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 20}" stroke="#e5e7eb"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{height - 6}" font-size="10" fill="#6b7280" '
            f'text-anchor="middle">{_e(_short(vmax * i / n))}</text>'
        )
    for i, (label, value) in enumerate(items):
        y = top + i * (bar_h + gap)
        w = max(plot_w * value / vmax, 1 if value else 0)
        parts.append(
            f'<text x="{label_w - 8}" y="{y + bar_h * 0.7:.1f}" font-size="11" '
            f'text-anchor="end" fill="#111827"><title>{_e(label)}</title>'
            f"{_e(_truncate(label, 30))}</text>"
        )
        parts.append(
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" rx="3" '
            f'fill="{color}"><title>{_e(label)}: {_e(value_label(value))}</title></rect>'
        )
        parts.append(
            f'<text x="{label_w + w + 6:.1f}" y="{y + bar_h * 0.7:.1f}" font-size="11" '
            f'fill="#374151">{_e(value_label(value))}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def vbar_chart(
    items: Sequence[tuple[str, float]], *, title: str, width: int = 520, color: str = PALETTE[1]
) -> str:
    """Vertical bars (a distribution), in the order given."""
    if not items:
        return _empty_chart(title, width)
    height, top, bottom, left = 260, 34, 40, 50
    plot_h = height - top - bottom
    plot_w = width - left - 16
    vmax, n = _axis(max(v for _, v in items))
    slot = plot_w / len(items)
    parts = [_svg_open(width, height, title), _title(title)]
    for i in range(n + 1):
        y = top + plot_h - plot_h * i / n
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#e5e7eb"/>'
        )
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" fill="#6b7280" '
            f'text-anchor="end">{_e(_short(vmax * i / n))}</text>'
        )
    for i, (label, value) in enumerate(items):
        h = plot_h * value / vmax
        x = left + i * slot + slot * 0.15
        y = top + plot_h - h
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" '
            f'height="{max(h, 1 if value else 0):.1f}" rx="3" fill="{color}">'
            f"<title>{_e(label)}: {_e(_short(value))}</title></rect>"
        )
        parts.append(
            f'<text x="{x + slot * 0.35:.1f}" y="{max(y - 4, top - 2):.1f}" '
            f'font-size="10" fill="#374151" text-anchor="middle">'
            f"{_e(_short(value))}</text>"
        )
        parts.append(
            f'<text x="{x + slot * 0.35:.1f}" y="{height - bottom + 16}" font-size="11" '
            f'fill="#111827" text-anchor="middle">{_e(label)}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="10" '
        f'fill="#6b7280" text-anchor="middle">deliveries</text></svg>'
    )
    return "".join(parts)


def percentile_chart(
    items: Sequence[tuple[str, int, int, int]], *, title: str, width: int = 520
) -> str:
    """Per group: idle p50, p90 and p99 as three thin bars (a log-free, linear scale)."""
    if not items:
        return _empty_chart(title, width)
    label_w, row_h, top = 180, 30, 48
    height = top + len(items) * row_h + 24
    vmax = _nice_duration_max(max(p99 for _, _, _, p99 in items))
    plot_w = width - label_w - 70
    parts = [_svg_open(width, height, title), _title(title)]
    for j, name in enumerate(("p50", "p90", "p99")):
        x = label_w + j * 70
        parts.append(
            f'<rect x="{x}" y="24" width="10" height="10" fill="{PALETTE[j]}"/>'
            f'<text x="{x + 14}" y="33" font-size="11" fill="#374151">{name}</text>'
        )
    for i in range(5):
        x = label_w + plot_w * i / 4
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - 20}" stroke="#e5e7eb"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{height - 6}" font-size="10" fill="#6b7280" '
            f'text-anchor="middle">{_e(_dur(int(vmax * i / 4)))}</text>'
        )
    for i, (label, *values) in enumerate(items):
        y = top + i * row_h
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 16}" font-size="11" text-anchor="end" '
            f'fill="#111827"><title>{_e(label)}</title>{_e(_truncate(label, 30))}</text>'
        )
        for j, v in enumerate(values):
            w = max(plot_w * v / vmax, 1 if v else 0)
            parts.append(
                f'<rect x="{label_w}" y="{y + 3 + j * 8}" width="{w:.1f}" height="7" '
                f'fill="{PALETTE[j]}"><title>{_e(label)} p{(50, 90, 99)[j]}: '
                f"{_e(_dur(v))}</title></rect>"
            )
        parts.append(
            f'<text x="{label_w + plot_w * values[2] / vmax + 6:.1f}" y="{y + 20}" '
            f'font-size="10" fill="#374151">{_e(_dur(values[2]))}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    points: Sequence[tuple[int, float]], *, title: str, width: int = 1110, note: str = ""
) -> str:
    """A time series (x: epoch ms, y: value) with dots on each point."""
    if not points:
        return _empty_chart(title, width)
    height, top, bottom, left, right = 240, 34, 36, 60, 20
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [p[0] for p in points]
    xmin, xmax = min(xs), max(xs)
    span = (xmax - xmin) or 1
    vmax, n = _axis(max(p[1] for p in points))

    def px(x: int) -> float:
        return left + (plot_w * (x - xmin) / span if xmax > xmin else plot_w / 2)

    def py(y: float) -> float:
        return top + plot_h - plot_h * y / vmax

    parts = [_svg_open(width, height, title), _title(title + (f" — {note}" if note else ""))]
    for i in range(n + 1):
        y = top + plot_h - plot_h * i / n
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
            f'stroke="#e5e7eb"/><text x="{left - 6}" y="{y + 4:.1f}" font-size="10" '
            f'fill="#6b7280" text-anchor="end">{_e(_short(vmax * i / n))}</text>'
        )
    ticks = (
        sorted({xmin, xmax, *(xmin + span * k // 4 for k in (1, 2, 3))}) if xmax > xmin else [xmin]
    )
    shown: set[str] = set()
    for t in ticks:
        if _time_label(t, span) in shown:
            continue
        shown.add(_time_label(t, span))
        parts.append(
            f'<text x="{px(t):.1f}" y="{height - 14}" font-size="10" fill="#6b7280" '
            f'text-anchor="middle">{_e(_time_label(t, span))}</text>'
        )
    if len(points) > 1:
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(points)
        )
        area = path + f" L{px(xs[-1]):.1f},{top + plot_h} L{px(xs[0]):.1f},{top + plot_h} Z"
        parts.append(f'<path d="{area}" fill="{PALETTE[0]}" fill-opacity="0.12"/>')
        parts.append(f'<path d="{path}" fill="none" stroke="{PALETTE[0]}" stroke-width="2"/>')
    for x, y in points:
        parts.append(
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{PALETTE[0]}">'
            f"<title>{_e(_time_label(x, 0))}: {_e(f'{y:,.0f}')}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _time_label(ms: int, span: int) -> str:
    t = datetime.fromtimestamp(ms / 1000.0, UTC)  # reports are in UTC, like the data
    if not span:
        return t.strftime("%Y-%m-%d %H:%M:%S UTC")
    if span < 600_000:
        return t.strftime("%H:%M:%S")
    if span < 86_400_000:
        return t.strftime("%H:%M")
    return t.strftime("%m-%d %H:%M")


def _svg_open(width: int, height: int, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}" '
        f'style="{_FONT}">'
    )


def _title(text: str) -> str:
    return f'<text x="0" y="16" font-size="13" font-weight="600" fill="#111827">{_e(text)}</text>'


def _empty_chart(title: str, width: int) -> str:
    return (
        _svg_open(width, 60, title)
        + _title(title)
        + '<text x="0" y="44" font-size="12" fill="#6b7280">no data</text></svg>'
    )


# -- the HTML report -------------------------------------------------------------------------

_CSS = """
body{margin:0;background:#f8fafc;color:#111827;$FONT;font-size:14px}
header{background:#0f172a;color:#f8fafc;padding:18px 28px}
header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#cbd5e1;font-size:12px}
main{padding:18px 28px;max-width:1200px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:18px}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:10px 16px;min-width:110px}
.card b{display:block;font-size:22px}.card span{color:#6b7280;font-size:12px}
.card.warn b{color:#b45309}.card.bad b{color:#b91c1c}
.grid{display:flex;flex-wrap:wrap;gap:16px}
.panel{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:14px;margin-bottom:16px}
table{border-collapse:collapse;width:100%;font-size:12px}
th,td{padding:4px 8px;border-bottom:1px solid #f1f5f9;text-align:left;white-space:nowrap}
th{color:#6b7280;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
h2{font-size:15px;margin:0 0 10px}footer{color:#6b7280;font-size:11px;padding:0 28px 20px}
""".replace("$FONT", _FONT)


def html_report(result: dict[str, Any], *, title: str = "pelctl fleet report") -> str:
    """The whole report as one HTML document (inline CSS and SVG, nothing external)."""
    t = result["totals"]
    multi = _multi(result)
    src = result.get("source") or {}
    where = src.get("path") or ", ".join(src.get("servers") or []) or "-"
    cards = [
        ("servers", t.get("servers"), ""),
        ("streams", t.get("streams"), ""),
        ("groups", t.get("groups"), ""),
        ("consumers", t.get("consumers"), ""),
        ("pending", t.get("pending"), ""),
        ("stuck", t.get("stuck"), "warn" if t.get("stuck") else ""),
        ("poison", t.get("poison"), "bad" if t.get("poison") else ""),
        ("dead consumers", t.get("dead_consumers"), "bad" if t.get("dead_consumers") else ""),
        ("DLQ entries", t.get("dlq_entries"), "warn" if t.get("dlq_entries") else ""),
    ]
    body = ['<div class="cards">']
    for label, value, cls in cards:
        body.append(
            f'<div class="card {cls}"><b>{_e(fmt_int(value))}</b><span>{_e(label)}</span></div>'
        )
    body.append("</div>")

    tr = result["trends"]
    series = [(_parse_ms(p["snapshot_time"]), float(p["pending"])) for p in tr["series"]]
    growth = tr.get("growth_per_hour")
    note = (
        f"{growth:+,.1f} entries/hour"
        if growth is not None
        else ("one snapshot so far" if len(series) == 1 else "")
    )
    body.append(
        '<div class="panel">'
        + line_chart(series, title="Fleet PEL size over snapshots", note=note)
        + "</div>"
    )

    top = result["groups"][:15]
    groups_chart = hbar_chart(
        [(_name(g, multi), g["pending"]) for g in top if g["pending"]],
        title="Pending entries by group (top 15)",
    )
    pct_chart = percentile_chart(
        [
            (_name(g, multi), g["idle_p50_ms"], g["idle_p90_ms"], g["idle_p99_ms"])
            for g in top
            if g["idle_p50_ms"] is not None
        ][:10],
        title="Idle time per group: p50 / p90 / p99",
    )
    deliv_chart = vbar_chart(
        [(d["bucket"], d["entries"]) for d in result["deliveries"]],
        title="Delivery-count distribution",
    )
    stuck_chart = hbar_chart(
        [
            (f"{c['consumer']} ({c['stream']}/{c['group']})", c["stuck"])
            for c in result["consumers"][:12]
        ],
        title=f"Stuck entries per consumer (idle >= {_dur(result['settings']['stuck_idle_ms'])})",
        color=PALETTE[2],
    )
    dlq_chart = hbar_chart(
        [(r["reason"] or "(no reason)", r["entries"]) for r in result["dlq"]["by_reason"][:10]],
        title="Dead-letter entries by reason",
        color=PALETTE[4],
    )
    growing_chart = hbar_chart(
        [(_name(g, multi), g["growth_per_hour"]) for g in tr["fastest_growing"][:10]],
        title="Fastest-growing groups (entries/hour)",
        color=PALETTE[3],
        value_label=lambda v: f"+{_short(v)}/h",
    )
    body.append('<div class="grid">')
    for chart in (groups_chart, pct_chart, deliv_chart, stuck_chart, dlq_chart, growing_chart):
        body.append(f'<div class="panel">{chart}</div>')
    body.append("</div>")

    for data, _records in tables(result)[1:]:
        body.append(_html_table(data))
    s = result.get("settings") or {}
    footer = (
        f"Generated by pelctl from {_e(where)}. Counts are exact; idle percentiles come from "
        f"Spark's percentile_approx (accuracy {s.get('accuracy', '-')}: rank error at most "
        f"N/{s.get('accuracy', '-')}). Stuck: idle &ge; {_e(_dur(s.get('stuck_idle_ms')))}; "
        f"poison: delivered &ge; {_e(s.get('poison_deliveries'))} times; dead consumer: holds "
        f"entries and unseen &ge; {_e(_dur(s.get('dead_after_ms')))}."
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width"><title>{_e(title)}</title>'
        f"<style>{_CSS}</style></head><body><header><h1>{_e(title)}</h1>"
        f"<p>Snapshot {_e(t.get('snapshot_time') or '-')} · {_e(where)} · "
        f"{tr['snapshots']} snapshot{'s' if tr['snapshots'] != 1 else ''} in the history</p>"
        f"</header><main>{''.join(body)}</main><footer>{footer}</footer></body></html>\n"
    )


def _parse_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _html_table(data: TableData, limit: int = 50) -> str:
    head = "".join(
        f'<th class="{"n" if c.justify == "right" else ""}">{_e(c.header)}</th>'
        for c in data.columns
    )
    rows = []
    for row in data.rows[:limit]:
        cells = "".join(
            f'<td class="{"n" if c.justify == "right" else ""}">{_e(v)}</td>'
            for c, v in zip(data.columns, row, strict=False)
        )
        rows.append(f"<tr>{cells}</tr>")
    more = ""
    if len(data.rows) > limit:
        more = f"<p>… and {len(data.rows) - limit:,} more rows (see -o json)</p>"
    caption = f"<p>{_e(data.caption)}</p>" if data.caption else ""
    return (
        f'<div class="panel"><h2>{_e(data.title)}</h2><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>{caption}{more}</div>"
    )


def _unknown_caption(result: dict[str, Any], any_dead: bool) -> str | None:
    """The dead-consumers table's caption: also how many consumers holding entries have an
    unknown liveness (below Redis 7.2 idle alone proves nothing; pelctl.core.liveness)."""
    n = (result.get("totals") or {}).get("liveness_unknown") or 0
    if not n:
        return None if any_dead else "none"
    return (
        f"{n:,} more consumer{'s' if n != 1 else ''} holding entries: liveness unknown "
        "(Redis < 7.2, no signal either way)"
    )
