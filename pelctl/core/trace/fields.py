"""What one entry's own fields say: a field's value (the last one of that name), the
lineage fields a requeue or a replay wrote (:mod:`pelctl.core.lineage` names them), and
whether an id a field holds is a stream id at all. Claims: shown, never trusted further."""

from __future__ import annotations

from collections.abc import Sequence

from pelctl.core import lineage
from pelctl.core.dlq.envelope import marker_field
from pelctl.core.entry_ids import normalize_ids
from pelctl.core.trace.model import Lineage


def valid_id(value: bytes | None) -> bool:
    if value is None:
        return False
    try:
        normalize_ids([value])
    except Exception:  # noqa: BLE001 - any invalid id is simply not one
        return False
    return b"-" in value


def last_value(flat: Sequence[bytes], name: bytes) -> bytes | None:
    found = None
    for i in range(0, len(flat) - 1, 2):
        if flat[i] == name:
            found = flat[i + 1]
    return found


def lineage_of(flat: Sequence[bytes], prefix: str) -> Lineage:
    retry_key, prior_key, original_key = lineage.names(prefix)
    retry = last_value(flat, retry_key)
    prior = last_value(flat, prior_key)
    return Lineage(
        original_id=last_value(flat, original_key),
        retry_count=lineage.count(retry) if retry is not None else None,
        prior_deliveries=lineage.count(prior) if prior is not None else None,
        replayed_from=last_value(flat, marker_field(prefix)),
    )
