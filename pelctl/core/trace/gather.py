""":func:`trace`: the steps in order (the entry and the message's id, the chain, the audit
log, the states in every group, the timeline, the advice), each from its module, assembled
into one :class:`~pelctl.core.trace.model.Trace`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from pelctl.base.binary import escape
from pelctl.core.dlq.envelope import default_dlq, dlq_source_of, is_dlq_name
from pelctl.core.entry_ids import normalize_ids
from pelctl.core.trace.advice import advise
from pelctl.core.trace.fields import valid_id
from pelctl.core.trace.model import Trace
from pelctl.core.trace.search import Found, Search, audit_chain, follow, identify
from pelctl.core.trace.shape import read_shape, xlen
from pelctl.core.trace.states import read_states
from pelctl.core.trace.timeline import build_timeline
from pelctl.redis.connection import Connection
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS


def trace(
    conn: Connection,
    stream: bytes,
    entry_id: bytes,
    *,
    dlqs: Sequence[bytes] = (),
    prefix: str = "_",
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    audit_log: Path | None = None,
    now_ms: int | None = None,
    progress: Callable[[float | None, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Trace:
    """The story of the message whose entry (or copy, or dead letter) is ``stream`` /
    ``entry_id``. ``dlqs``: dead-letter streams to search besides the convention's
    ``<source>:dlq``; ``audit_log``: the log to read (default: the user's, as written by
    every mutation). ``progress(fraction, entries read)`` is called as the search goes;
    ``should_stop`` ends it early (:class:`pelctl.core.aggregate.ScanCancelled`)."""
    from pelctl.core.targets import require_stream

    (entry_id,) = normalize_ids([entry_id])
    require_stream(conn, stream)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    notes: list[str] = []
    source = dlq_source_of(stream) if is_dlq_name(stream) else stream
    assert source is not None
    dlq_keys = list(dict.fromkeys([default_dlq(source), *dlqs]))
    if stream != source and stream not in dlq_keys:
        dlq_keys.insert(0, stream)

    # 1. The entry asked for, and the message's id.
    asked_flat, original = identify(
        conn, stream, entry_id, source, prefix, max_server_ms, should_stop, notes
    )

    # 2. The chain, in the streams being traced only.
    search = Search(
        conn,
        source,
        {key: read_shape(conn, key) for key in [source, *dlq_keys]},
        max_server_ms,
        progress,
        should_stop,
    )
    if not search.shapes[source].exists:
        notes.append(f"stream {escape(source)} does not exist (deleted, or never written)")
    follow(search, stream, entry_id, original, dlq_keys, prefix)
    found, shapes = search.found, search.shapes
    # The message's own entry and the entry asked for, when the scans did not see them.
    found.setdefault((stream, entry_id), Found(stream, entry_id, asked_flat, stream != source))
    found[(stream, entry_id)].traced = True
    if valid_id(original) and shapes[source].exists and (source, original) not in found:
        found[(source, original)] = Found(source, original, None, False)
    for s in search.searched:
        s.length = xlen(conn, s.stream)

    # 3. The audit log, and the dead letters replayed since (the replay removed them).
    audit = audit_chain(search, dlq_keys, prefix, audit_log)

    # 4. States in every group, the reason an entry is gone.
    entries = read_states(conn, found.values(), shapes, original, prefix, now)
    entries = sorted(entries, key=lambda e: e.sort_key)
    result = Trace(
        stream=stream,
        id=entry_id,
        source=source,
        original_id=original,
        server=f"{conn.settings.redacted_url}",
        now_ms=now,
        entries=tuple(entries),
        timeline=tuple(build_timeline(entries, audit, now)),
        searched=tuple(search.searched),
        audit=audit,
        advice=(),
        summary="",
        notes=tuple(notes),
        copies_truncated=search.truncated,
    )
    advice, summary = advise(result)
    return replace(result, advice=tuple(advice), summary=summary)
