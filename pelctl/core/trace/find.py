"""``find --trace``: each match with its trace, a copy of a message already traced referring
to the match whose trace holds it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pelctl.core.find import Match
from pelctl.core.trace.gather import trace
from pelctl.core.trace.model import Trace
from pelctl.redis.connection import Connection
from pelctl.redis.scan import DEFAULT_MAX_SERVER_MS


@dataclass(frozen=True, slots=True)
class TracedMatch:
    """A match of ``find --trace`` with its trace, or with the earlier match whose trace
    already holds it (a copy of the same message: traced once)."""

    match: Match
    trace: Trace | None
    traced_with: Match | None = None


def trace_matches(
    conn: Connection,
    matches: Iterable[Match],
    *,
    dlqs: Sequence[bytes] = (),
    prefix: str = "_",
    max_server_ms: float = DEFAULT_MAX_SERVER_MS,
    audit_log: Path | None = None,
) -> Iterator[TracedMatch]:
    """Each match with its trace, as the matches come; a match found in an earlier match's
    trace refers to it. Memory: the ids of the chains traced so far."""
    covered: dict[tuple[bytes, bytes], Match] = {}
    for m in matches:
        earlier = covered.get((m.stream, m.id))
        if earlier is not None:
            yield TracedMatch(m, None, earlier)
            continue
        t = trace(
            conn,
            m.stream,
            m.id,
            dlqs=[d for d in dlqs if d != m.stream],
            prefix=prefix,
            max_server_ms=max_server_ms,
            audit_log=audit_log,
        )
        for e in t.entries:
            covered.setdefault((e.stream, e.id), m)
        yield TracedMatch(m, t)
