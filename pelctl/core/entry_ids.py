"""Stream ids as the user gives them (``--id``, ``dlq show ID``): the one rule
(:func:`normalize_ids`), and the pipelined look-up of each (:func:`replies_by_id`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import UsageError

ID_PATTERN = re.compile(rb"^\d+(-\d+)?$")


def normalize_ids(ids: Iterable[bytes]) -> tuple[bytes, ...]:
    """Validate stream ids (``1700000000000-0``; a bare ``ms`` means ``ms-0``), dedupe."""
    out: dict[bytes, None] = {}
    for raw in ids:
        entry_id = raw.strip()
        if not ID_PATTERN.match(entry_id) or any(int(p) >= 2**64 for p in entry_id.split(b"-")):
            raise UsageError(
                f"not a stream id: {escape(raw)}", hint="ids look like 1700000000000-0"
            )
        if b"-" not in entry_id:
            entry_id += b"-0"
        out[entry_id] = None
    return tuple(out)


def replies_by_id(
    client: Any,  # a raw redis-py client
    ids: Sequence[bytes],
    command: Callable[[bytes], Sequence[object]],
    size: int = 2_000,
) -> Iterator[tuple[bytes, Any]]:
    """Each id with the reply to ``command(id)``, pipelined ``size`` ids a round trip (the
    look-up of explicit ``--id`` values)."""
    for i in range(0, len(ids), size):
        chunk = ids[i : i + size]
        pipe = client.pipeline(transaction=False)
        for entry_id in chunk:
            pipe.execute_command(*command(entry_id))
        yield from zip(chunk, pipe.execute(), strict=True)
