"""What a replayed copy holds, and the markers that make a cross-slot replay exactly once.

Every copy carries its lineage (:mod:`pelctl.core.lineage`: ``<prefix>prior_deliveries``,
``<prefix>original_id``) and ``<prefix>replayed_from = <DLQ id>`` (the replay marker field),
unless ``no_lineage`` (``--no-lineage``): then the copy is the original fields alone. The
marker *set* of the cross-slot path (:func:`marker_key`) is a separate key: exactly once
holds either way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from pelctl.core import lineage
from pelctl.core.dlq.envelope import envelope_names, head, marker_field
from pelctl.redis.scripts import hash_tag, key_slot

# How long the cross-slot replay markers are kept (a rerun after a kill must come within it).
MARKER_RETENTION_MS = 7 * 86_400_000


def replay_fields(
    raw: Iterable[tuple[bytes, bytes]],
    prefix: str = "_",
    *,
    keep_envelope: bool = False,
    keep_retries: bool = False,
    no_lineage: bool = False,
) -> list[bytes]:
    """The fields a replayed copy gets (the marker field is added by the script).

    Original fields in order; the envelope (``<prefix>dlq_*``) dropped unless
    ``keep_envelope``; ``<prefix>retry_count`` dropped (the count restarts) unless
    ``keep_retries``; a ``<prefix>replayed_from`` of an earlier replay always dropped; then
    the lineage (:func:`pelctl.core.lineage.replay_copy`): ``<prefix>prior_deliveries`` and
    ``<prefix>original_id``.

    ``no_lineage``: the original fields exactly as they were before the move (only the
    envelope dropped): nothing removed, nothing added.
    """
    p = prefix.encode()
    names = envelope_names(head(prefix))
    pairs = list(raw)
    if no_lineage:
        return lineage.replay_copy(pairs, {}, prefix, drop=set(names), lineage=False)
    drop = {marker_field(prefix)}
    if not keep_envelope:
        drop.update(names)
    if not keep_retries:
        drop.add(p + b"retry_count")
    env = {names[k].encode(): v for k, v in pairs if k in names}  # the last value of each
    return lineage.replay_copy(pairs, env, prefix, drop=drop)


def fields_digest(fields: Sequence[bytes]) -> str:
    """SHA1 (hex) of ``fields``, each prefixed by its length (``3:abc,0:,...``): how
    ``replay_mark.lua`` recognises a copy that carries no marker field."""
    h = hashlib.sha1(usedforsecurity=False)
    for n, f in enumerate(fields):
        h.update(b"%s%d:" % (b"," if n else b"", len(f)))
        h.update(f)
    return h.hexdigest()


_TAG_SEARCH: dict[int, bytes] = {}


def _slot_tag(slot: int) -> bytes:
    """A short hash tag whose slot is ``slot`` (found once by search, then cached)."""
    if slot not in _TAG_SEARCH:
        n = 0
        while key_slot(b"pelctl-%d" % n) != slot:
            n += 1
        _TAG_SEARCH[slot] = b"pelctl-%d" % n
    return _TAG_SEARCH[slot]


def marker_key(target: bytes, dlq: bytes) -> bytes:
    """The sorted set of DLQ ids already copied into ``target`` from ``dlq`` (cross-slot
    replay). It shares ``target``'s cluster slot: ``{orders}:pelctl-replayed:orders:dlq``."""
    tag = hash_tag(target)
    if tag == target and (b"}" in target or b"{" in target or not target):
        tag = _slot_tag(key_slot(target))  # a name whose own braces would not form the tag
    key = b"{" + tag + b"}:pelctl-replayed:" + dlq
    assert key_slot(key) == key_slot(target)
    return key
