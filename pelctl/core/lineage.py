"""Lineage: the fields that let a message be followed through every copy pelctl makes.

A requeue, a dead-letter move and a replay each write a *copy* of an entry under a new id.
The lineage fields say which message a copy is, and how often it was delivered before:

- ``<prefix>retry_count``: how many times the message was requeued (a requeue adds one; a
  replay removes it unless ``--keep-retries``: the count restarts after a fix);
- ``<prefix>prior_deliveries``: deliveries of the earlier copies (a requeue adds the
  delivery count of the copy it replaces; a replay folds in the dead letter's
  ``<prefix>dlq_deliveries``);
- ``<prefix>original_id``: the id of the message as first written, kept through every hop
  (a requeue keeps the entry's own, else writes the entry's id; a replay keeps it, else
  writes the dead letter's ``<prefix>dlq_id``).

A dead-letter move leaves the original fields untouched and records the moved copy's id and
delivery count in its envelope (``_dlq_id``, ``_dlq_deliveries``), so a dead letter's
lineage is read, not written: :func:`of_dead_letter`.

This module is the one place on the Python side that decides these fields. The scripts
build the requeued copy in Lua (``pelctl/redis/lua/_prelude.lua``, ``requeue_copy``; the
one-script paths and the ordered path's lease use it): :func:`requeue_copy` is its twin,
used where no script runs (:func:`pelctl.reclaim.settle.settle_unscripted`), and a test
compares the bytes both write on the same inputs. A change of lineage goes in both.

With ``lineage=False`` (``--no-lineage``) a copy carries exactly the entry's fields: nothing
added, nothing removed (an entry that already carries lineage fields keeps them as they
are: they are its fields). There is then no retry count (so no retry limit) and no
original id: consumers can only deduplicate by content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

RETRY_COUNT = "retry_count"
PRIOR_DELIVERIES = "prior_deliveries"
ORIGINAL_ID = "original_id"
DLQ_ID = "dlq_id"
DLQ_DELIVERIES = "dlq_deliveries"
REPLAYED_FROM = "replayed_from"

# A count as the scripts read it: Lua 5.1's tonumber() (C's strtod: decimal, or 0x hex with
# an optional p exponent) with the fraction dropped; anything else (and anything negative, or
# so big that a sum of two would not print exactly with Lua's %.14g) counts as 0. The same
# limit is COUNT_LIMIT in _prelude.lua.
_DECIMAL = re.compile(rb"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
_HEX = re.compile(rb"^\s*[-+]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][-+]?\d+)?\s*$")
COUNT_LIMIT = 10**12


def names(prefix: str | bytes) -> tuple[bytes, bytes, bytes]:
    """``(retry_count, prior_deliveries, original_id)`` field names for ``prefix``."""
    p = prefix if isinstance(prefix, bytes) else prefix.encode()
    return p + RETRY_COUNT.encode(), p + PRIOR_DELIVERIES.encode(), p + ORIGINAL_ID.encode()


def count(value: bytes | None) -> int:
    """A lineage count from its field value, exactly as ``_prelude.lua``'s ``count()``."""
    if value is None:
        return 0
    if _DECIMAL.match(value):
        n = float(value)
    elif _HEX.match(value):
        n = float.fromhex(value.decode())
    else:
        return 0
    if not 0 <= n < COUNT_LIMIT:  # also NaN
        return 0
    return int(n)


def requeue_copy(
    flat: Sequence[bytes],
    prefix: str,
    entry_id: bytes,
    deliveries: int,
    *,
    lineage: bool = True,
) -> tuple[int, list[bytes]]:
    """``(retries so far, the requeued copy's fields)`` of an entry delivered ``deliveries``
    times (its PEL count).

    The fields in order without the three lineage fields, then ``<prefix>retry_count``
    (+1), ``<prefix>prior_deliveries`` (+ ``deliveries``) and ``<prefix>original_id``
    (kept, else ``entry_id``). Without ``lineage``: the fields exactly, and 0 retries.
    Twin of ``requeue_copy`` in ``_prelude.lua``.
    """
    if not lineage:
        return 0, list(flat)
    retry_key, prior_key, original_key = names(prefix)
    retries, prior, original, kept = 0, 0, entry_id, []
    for i in range(0, len(flat), 2):
        key, value = flat[i], flat[i + 1]
        if key == retry_key:
            retries = count(value)
        elif key == prior_key:
            prior = count(value)
        elif key == original_key:
            original = value
        else:
            kept += [key, value]
    return retries, [
        *kept,
        retry_key,
        str(retries + 1).encode(),
        prior_key,
        str(prior + deliveries).encode(),
        original_key,
        original,
    ]


def of_dead_letter(
    fields: Iterable[tuple[bytes, bytes]],
    dlq_id: bytes | None,
    dlq_deliveries: int | None,
    prefix: str | bytes,
) -> tuple[bytes | None, int | None]:
    """``(original id, prior deliveries)`` of a dead letter from its original ``fields``
    (envelope removed) and its envelope's ``_dlq_id`` / ``_dlq_deliveries``.

    The original id is the fields' ``<prefix>original_id`` (the last one, if repeated), else
    ``_dlq_id``; prior deliveries are the fields' ``<prefix>prior_deliveries`` (None when
    absent). The message's deliveries in all are ``prior + _dlq_deliveries``.
    """
    del dlq_deliveries  # kept apart: the caller adds it (it means the moved copy's count)
    _retry_key, prior_key, original_key = names(prefix)
    original: bytes | None = None
    prior: bytes | None = None
    for k, v in fields:
        if k == original_key:
            original = v
        elif k == prior_key:
            prior = v
    return (original if original is not None else dlq_id), (
        count(prior) if prior is not None else None
    )


def replay_copy(
    raw: Iterable[tuple[bytes, bytes]],
    envelope: dict[bytes, bytes],
    prefix: str,
    *,
    drop: set[bytes],
    lineage: bool = True,
) -> list[bytes]:
    """The fields of a replayed copy (the replay marker field is added by the script).

    ``raw`` is every field of the dead letter in order, ``envelope`` its parsed envelope
    (``{b"id": ..., b"deliveries": ...}``, the last value of each), ``drop`` the names the
    replay removes (the envelope unless kept, ``<prefix>retry_count`` unless kept, an older
    replay marker). With ``lineage`` the lineage fields are moved to the end:
    ``<prefix>prior_deliveries`` = the fields' value + ``_dlq_deliveries`` and
    ``<prefix>original_id`` = the fields' value, else ``_dlq_id`` (each only when known).
    """
    if not lineage:
        return [x for k, v in raw if k not in drop for x in (k, v)]
    _retry_key, prior_key, original_key = names(prefix)
    out: list[bytes] = []
    prior: bytes | None = None
    original: bytes | None = None
    for k, v in raw:
        if k == prior_key:
            prior = v
        elif k == original_key:
            original = v
        elif k not in drop:
            out += [k, v]
    moved = envelope.get(b"deliveries")
    if prior is not None or moved is not None:
        out += [prior_key, str(count(prior) + count(moved)).encode()]
    original = original if original is not None else envelope.get(b"id")
    if original is not None:
        out += [original_key, original]
    return out


def no_lineage_note(action: str, prefix: str = "_") -> str:
    """What ``--no-lineage`` means for a plan (shown with its dry run and confirmation)."""
    if action == "replay":
        added = f"no {prefix}{ORIGINAL_ID}, {prefix}{PRIOR_DELIVERIES} or {prefix}{REPLAYED_FROM}"
        return (
            f"--no-lineage: each copy is the original fields alone ({added}); consumers "
            "can deduplicate by content only"
        )
    added = f"no {prefix}{RETRY_COUNT}, {prefix}{PRIOR_DELIVERIES} or {prefix}{ORIGINAL_ID}"
    return (
        f"--no-lineage: each copy is the entry's fields alone ({added}): no retry count, "
        "so no retry limit; consumers can deduplicate by content only"
    )


__all__ = [
    "ORIGINAL_ID",
    "PRIOR_DELIVERIES",
    "RETRY_COUNT",
    "count",
    "names",
    "no_lineage_note",
    "of_dead_letter",
    "replay_copy",
    "requeue_copy",
]
