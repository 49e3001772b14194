"""Rows and JSON for dead-letter streams: entries (``entries``), one entry in full
(``ShowRenderer``), stats (``STATS``); the TUI's DLQ view uses the same rows. Replay and
purge: :mod:`pelctl.render.dlq_mutate`."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from pelctl.base.binary import escape, to_json_text
from pelctl.base.durations import format_duration_ms
from pelctl.core.decoders.common import Decoded
from pelctl.core.decoders.registry import decode
from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.dlq.read import DlqStats
from pelctl.core.models import POISON_DELIVERIES
from pelctl.render import payload
from pelctl.render.pending import fields_json, fields_preview
from pelctl.render.protocol import (
    Blank,
    Message,
    Pairs,
    Part,
    Record,
    ResultRenderer,
    Rows,
)
from pelctl.render.table import Column, TableData, fmt_int

# Narrow terminals (docs/output.md): the original id goes first, then the payload preview
# (``dlq show`` has it whole), then the owner; names, reasons and payloads are shortened,
# the payload and the owner before the source and the reason; the id (what ``dlq show`` and
# ``dlq replay`` take), the deliveries and the age stay.
ENTRY_COLUMNS = (
    Column("id", "ID"),
    Column("source", "SOURCE", shrinkable=True, min_width=10),
    Column("original_id", "ORIGINAL ID", priority=3),
    Column("owner", "OWNER", priority=1, shrinkable=True, min_width=10),
    Column("deliveries", "DELIV", "right"),
    Column("reason", "REASON", shrinkable=True, min_width=24),
    Column("age", "AGE", "right"),
    Column("fields", "FIELDS", priority=2, shrinkable=True, min_width=16),
)
DLQ_COLUMN = Column("dlq", "DLQ", shrinkable=True, min_width=10)


def _b(value: bytes | None) -> str:
    return escape(value) if value is not None else "-"


def _jb(value: bytes | None) -> str | None:
    return escape(value) if value is not None else None


def _n(value: int | None) -> str:
    return str(value) if value is not None else "-"


def now_ms() -> int:
    return int(time.time() * 1000)


# -- entries -----------------------------------------------------------------------------------


def entry_columns(with_dlq: bool) -> tuple[Column, ...]:
    return ((DLQ_COLUMN,) if with_dlq else ()) + ENTRY_COLUMNS


def entry_row(
    e: DlqEntry,
    now: int,
    *,
    with_dlq: bool = False,
    width: int = 60,
    decoded: Decoded | None = payload.UNSET,
) -> tuple[str, ...]:
    row = (
        e.id.decode(),
        _b(e.source),
        _b(e.original_id),
        _b(e.owner),
        _n(e.total_deliveries),
        e.reason if e.reason is not None else "-",
        format_duration_ms(max(0, now - e.time_ms)),
        fields_preview(e.fields, width=width, decoded=decoded),
    )
    return ((escape(e.dlq),) if with_dlq else ()) + row


def entry_json(e: DlqEntry, now: int, decoded: Decoded | None = payload.UNSET) -> dict[str, Any]:
    """One entry as JSON: names escaped where binary, payload values as text (escaped when
    not UTF-8), the envelope parsed, the lineage read: ``original_id`` is the message's
    first id, ``consumer`` its last owner (``_dlq_owner``), ``deliveries`` every delivery of
    every copy (``prior_deliveries`` + ``dlq_deliveries``); ``dlq_id`` and ``dlq_deliveries``
    are the envelope's, about the copy that was moved; ``decoded``: the payload decoded, null
    when no decoder knows it."""
    return {
        "dlq": escape(e.dlq),
        "id": e.id.decode(),
        "source": _jb(e.source),
        "group": _jb(e.group),
        "original_id": _jb(e.original_id),
        "consumer": _jb(e.owner),
        "deliveries": e.total_deliveries,
        "idle_ms": e.idle_ms,
        "reason": e.reason,
        "at_ms": e.at_ms,
        "age_ms": max(0, now - e.time_ms),
        "fields": fields_json(e.fields),
        # Added last (CSV columns keep their places): the envelope's own two, about the copy
        # that was moved, and the deliveries of the copies before it.
        "dlq_id": _jb(e.dlq_id),
        "dlq_deliveries": e.deliveries,
        "prior_deliveries": e.prior_deliveries,
        "decoded": payload.decoded_json(e.fields, decoded),
    }


def entry_style(e: DlqEntry) -> str | None:
    if not e.enveloped:
        return "dim"
    if (e.total_deliveries or 0) >= POISON_DELIVERIES:
        return "magenta"
    return None


def entries(with_dlq: bool = False) -> Rows[DlqEntry]:
    """Dead-letter entries (``dlq list``); ``with_dlq``: a DLQ column first (entries of
    several dead-letter streams). Each format decodes a payload once."""
    return Rows[DlqEntry](
        entry_columns(with_dlq),
        lambda e: entry_row(e, now_ms(), with_dlq=with_dlq),
        lambda e: entry_json(e, now_ms()),
        entry_style,
    )


def list_footer(
    shown: int, *, dlqs: int, total: int, limit: int | None, filtered: bool
) -> str | None:
    """What ``dlq list`` says after its rows: no DLQ found, a full page of how many, or
    none shown (``total``: the entries of the ``dlqs`` dead-letter streams)."""
    if not dlqs:
        return "no dead-letter streams found"
    if limit is not None and shown == limit and total > shown:
        return (
            f"showing {shown:,} of {total:,} dead-letter entries (before filters); "
            "use --limit N or --all"
        )
    if shown == 0:
        return "no entries" + (" match the filters" if filtered and total else "")
    return None


def _when(ms: int | None, now: int) -> str:
    if ms is None:
        return "-"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"
    return f"{stamp} ({format_duration_ms(max(0, now - ms))} ago)"


def entry_pairs(e: DlqEntry, now: int) -> list[tuple[str, str]]:
    """Everything about one entry (``dlq show``): envelope first, then every field."""
    pairs = [
        ("dlq", escape(e.dlq)),
        ("id", e.id.decode()),
        ("dead-lettered", _when(e.time_ms, now)),
        ("source", _b(e.source)),
        ("group", _b(e.group)),
        ("original id", _b(e.original_id)),
    ]
    if e.dlq_id is not None and e.dlq_id != e.original_id:  # a requeued or replayed copy
        pairs.append(("moved copy id", _b(e.dlq_id)))
    pairs += [
        ("last owner", _b(e.owner)),
        ("deliveries", _deliveries(e)),
        ("idle when moved", format_duration_ms(e.idle_ms)),
        ("reason", e.reason if e.reason is not None else "-"),
    ]
    if not e.enveloped:
        pairs.append(("note", "no dead-letter envelope: replay needs --to STREAM"))
    return pairs


def _deliveries(e: DlqEntry) -> str:
    """``7 (moved copy 2, earlier copies 5)``: every delivery of the message, then
    ``_dlq_deliveries`` and ``_prior_deliveries`` when the entry was requeued or replayed."""
    total = _n(e.total_deliveries)
    if e.prior_deliveries is None:
        return total
    return f"{total} (moved copy {_n(e.deliveries)}, earlier copies {e.prior_deliveries})"


def field_rows(e: DlqEntry) -> TableData:
    # Shown whole (``dlq show`` is where a payload is read in full): a long value wraps.
    cols = (Column("field", "FIELD"), Column("value", "VALUE"))
    return TableData(cols, [(escape(k), escape(v)) for k, v in e.fields], title="fields")


def payload_view(e: DlqEntry) -> payload.Sections | None:
    """The decoded payload of ``dlq show`` (None: no decoder knows it; the fields say all)."""
    d = decode(e.fields)
    return payload.sections(d) if d is not None else None


def payload_parts(view: payload.Sections) -> list[Part]:
    """The decoded payload: its format and scalars, then in the decoder's order tables
    (headers, labels) and indented JSON (a body, args)."""
    pairs = [("payload", view.format), *view.pairs, *(("note", n) for n in view.notes)]
    parts: list[Part] = [Pairs(pairs, title="decoded payload")]
    for title, part in view.parts:
        parts.append(Blank())
        if isinstance(part, str):
            parts += [Message(f"{title}:", "bold"), Message(part)]
        else:
            parts.append(payload.table_data(title, part))
    return parts


class ShowRenderer(ResultRenderer[DlqEntry]):
    """``dlq show``: the entry in JSON with its ordered field pairs; in CSV its fields;
    in text the envelope, the decoded payload in full, then every field."""

    def __init__(self, now: int) -> None:
        self.now = now

    def document(self, result: DlqEntry) -> dict[str, Any]:
        return show_json(result, self.now)

    def records(self, result: DlqEntry) -> Sequence[Record]:
        return [{"field": k, "value": v} for k, v in field_rows(result).rows]

    def view(self, result: DlqEntry, width: int) -> Iterable[Part]:
        title = f"{escape(result.dlq)} {result.id.decode()}"
        parts: list[Part] = [Pairs(entry_pairs(result, self.now), title=title), Blank()]
        decoded = payload_view(result)
        if decoded is not None:
            parts += [*payload_parts(decoded), Blank()]
        return [*parts, field_rows(result)]


def show_json(e: DlqEntry, now: int) -> dict[str, Any]:
    out = entry_json(e, now)
    # Field names may repeat in a stream entry: the ordered pairs keep every one.
    out["field_pairs"] = [[to_json_text(k), to_json_text(v)] for k, v in e.fields]
    out["binary"] = [escape(k) for k, v in e.fields if not _utf8(k) or not _utf8(v)]
    return out


def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# -- stats -------------------------------------------------------------------------------------


def _source_name(s: bytes | None) -> str:
    return escape(s) if s is not None else "(no envelope)"


def _reason_name(r: str | None) -> str:
    return r if r is not None else "(none)"


def hour_label(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:00Z", time.gmtime(ms / 1000))


def stats_json(s: DlqStats) -> dict[str, Any]:
    return {
        "total": s.total,
        "by_source": {_source_name(k): n for k, n in s.by_source},
        "by_reason": {_reason_name(k): n for k, n in s.by_reason},
        "by_hour": {hour_label(h): n for h, n in s.by_hour},
        "by_dlq": {escape(k): n for k, n in s.by_dlq},
        "oldest_ms": s.oldest_ms,
        "newest_ms": s.newest_ms,
    }


def _bar(n: int, top: int, width: int = 30) -> str:
    if top <= 0 or n <= 0:
        return ""
    return "█" * max(1, round(width * n / top))


def stats_tables(s: DlqStats) -> list[TableData]:
    # Narrow terminals: the bar goes first; sources and reasons are shortened.
    count_cols = (
        Column("key", ""),
        Column("count", "COUNT", "right"),
        Column("bar", "", priority=1),
    )

    def table(title: str, header: str, rows: Sequence[tuple[str, int]]) -> TableData:
        top = max((n for _k, n in rows), default=0)
        cols = (Column("key", header, shrinkable=True, min_width=12),) + count_cols[1:]
        return TableData(cols, [(k, fmt_int(n), _bar(n, top)) for k, n in rows], title=title)

    out = [
        table("by source", "SOURCE", [(_source_name(k), n) for k, n in s.by_source]),
        table("by reason", "REASON", [(_reason_name(k), n) for k, n in s.by_reason]),
        table("by hour (UTC, dead-lettered)", "HOUR", [(hour_label(h), n) for h, n in s.by_hour]),
    ]
    if len(s.by_dlq) > 1:
        out.insert(0, table("by dead-letter stream", "DLQ", [(escape(k), n) for k, n in s.by_dlq]))
    return out


def stats_summary(s: DlqStats) -> str:
    if not s.total:
        return "0 entries"
    span = ""
    if s.oldest_ms is not None and s.newest_ms is not None:
        span = (
            f"; oldest {format_duration_ms(max(0, s.now_ms - s.oldest_ms))} ago, newest "
            f"{format_duration_ms(max(0, s.now_ms - s.newest_ms))} ago"
        )
    n = s.total
    return (
        f"{n:,} entr{'y' if n == 1 else 'ies'} in {len(s.by_dlq)} dead-letter stream"
        + ("s" if len(s.by_dlq) != 1 else "")
        + span
    )


class StatsRenderer(ResultRenderer[DlqStats]):
    """``dlq stats``: the counts as one document; in CSV one record per count (its kind,
    key and count); in text the summary line, then a table per kind."""

    def document(self, result: DlqStats) -> dict[str, Any]:
        return stats_json(result)

    def records(self, result: DlqStats) -> Sequence[Record]:
        doc = stats_json(result)
        return [
            {"kind": kind[3:], "key": k, "count": n}
            for kind in ("by_dlq", "by_source", "by_reason", "by_hour")
            for k, n in doc[kind].items()
        ]

    def view(self, result: DlqStats, width: int) -> Iterable[Part]:
        parts: list[Part] = [Message(stats_summary(result))]
        if result.total:
            for table in stats_tables(result):
                parts += [Blank(), table]
        return parts


STATS = StatsRenderer()
