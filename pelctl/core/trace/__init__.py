"""``pelctl trace STREAM ID``: one message's whole story (docs/trace.md).

A message can be read and acknowledged, pending with a dead worker, requeued (a copy under a
new id carrying ``_original_id``), moved to a dead-letter stream (an entry carrying the
``_dlq_*`` envelope), replayed (another copy, carrying ``_replayed_from``) or deleted. The
answer is spread over the stream, every group's PEL, the dead-letter streams and the audit
log; :func:`trace` gathers it:

1. the entry asked for (``XRANGE id id``), and the message's id as first written: the
   entry's ``<prefix>original_id`` (a dead letter's original id: the field, else its
   ``_dlq_id``), else its own id (:mod:`pelctl.core.lineage` decides these fields);
2. its copies, in the streams being traced only: the source stream from the message's id on
   (copies are always written later into the same stream), read by the stream scan engine
   in bounded calls, and each dead-letter stream whole (the source's ``<stream>:dlq`` by the
   naming convention, plus any named with ``--dlq``). A copy joins the chain when its
   ``<prefix>original_id`` is the message's id, or, for a dead letter of the source, when
   its ``_dlq_id`` is one of the chain's ids in the source. Whatever an entry's fields
   claim (an ``_original_id`` or ``_dlq_source`` pointing elsewhere) is shown as a claim:
   it never adds a stream to the search;
3. for every copy and every group of its stream: pending (owner, idle, deliveries, the
   owner's liveness verdict), acknowledged, not yet delivered, or removed before the group
   read it; a copy gone from its stream: deleted or trimmed (``XINFO STREAM``);
4. the local audit log's lines that touched one of the chain's ids on this server;
5. what to do next, in the runbook style of ``inspect``'s advice.

Reads only; every call bounded (the scan engines' ``max_server_ms``; ``XPENDING`` of single
ids, pipelined).

The modules, each importing only those before it:

- :mod:`~pelctl.core.trace.model`: the vocabulary (states, statuses, kinds) and the frozen
  results (:class:`Trace`, :class:`TracedEntry`, :class:`GroupState`, ...);
- :mod:`~pelctl.core.trace.fields`: what one entry's own fields say (its lineage);
- :mod:`~pelctl.core.trace.shape`: what the server says of a stream, and so why an entry is
  (not) in it;
- :mod:`~pelctl.core.trace.audit`: the audit log's lines about the chain (:func:`read_audit`);
- :mod:`~pelctl.core.trace.search`: steps 1, 2 and 4, finding the chain;
- :mod:`~pelctl.core.trace.states`: step 3, each member's state in every group;
- :mod:`~pelctl.core.trace.timeline` and :mod:`~pelctl.core.trace.advice`: the story told
  in time order, and step 5 (:func:`advise`);
- :mod:`~pelctl.core.trace.gather`: :func:`trace`, the steps assembled;
- :mod:`~pelctl.core.trace.find`: ``find --trace`` (:func:`trace_matches`).

This package re-exports their public names (``from pelctl.core.trace import trace,
Trace``); pelctl's own modules import from the module that defines a name.
"""

from __future__ import annotations

from pelctl.core.trace.advice import advise
from pelctl.core.trace.audit import read_audit
from pelctl.core.trace.find import TracedMatch, trace_matches
from pelctl.core.trace.gather import trace
from pelctl.core.trace.model import (
    ACKNOWLEDGED,
    COPY,
    DEAD_LETTER,
    DELETED,
    GONE,
    GROUP_STATES,
    KINDS,
    LOST,
    MAX_AUDIT_LINES,
    MAX_COPIES,
    NEVER_WRITTEN,
    NO_STREAM,
    NOT_DELIVERED,
    ORIGINAL,
    PENDING,
    PRESENT,
    REPLAYED,
    REQUEUED,
    SKIPPED,
    STATUSES,
    TRIMMED,
    AuditLine,
    AuditRead,
    Event,
    GroupState,
    Lineage,
    Trace,
    TracedEntry,
)

__all__ = [
    "ACKNOWLEDGED",
    "AuditLine",
    "AuditRead",
    "COPY",
    "DEAD_LETTER",
    "DELETED",
    "Event",
    "GONE",
    "GROUP_STATES",
    "GroupState",
    "KINDS",
    "LOST",
    "Lineage",
    "MAX_AUDIT_LINES",
    "MAX_COPIES",
    "NEVER_WRITTEN",
    "NO_STREAM",
    "NOT_DELIVERED",
    "ORIGINAL",
    "PENDING",
    "PRESENT",
    "REPLAYED",
    "REQUEUED",
    "SKIPPED",
    "STATUSES",
    "TRIMMED",
    "Trace",
    "TracedEntry",
    "TracedMatch",
    "advise",
    "read_audit",
    "trace",
    "trace_matches",
]
