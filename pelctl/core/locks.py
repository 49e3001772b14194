"""Lock keys (``--lock-key``, a context's ``lock_key``): the key a worker holds while it
processes an entry. A held lock makes its consumer alive (:mod:`pelctl.core.liveness`) and its
entry off limits to the entry repairs (:mod:`pelctl.core.repairs`). Here: rendering a
pattern for an entry, checking a pattern, and finding which common pattern a group's workers
use (:func:`detect_lock_key`, bounded; ``inspect`` offers what it finds as ``--lock-key``).
Light: the Redis layer is imported only by the detection, when it runs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pelctl.base.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.redis.connection import Connection

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(stream|group|id|consumer)\}")


def lock_key(pattern: str, stream: bytes, group: bytes, entry_id: bytes, owner: bytes) -> bytes:
    """Render ``--lock-key``: ``{stream} {group} {id} {consumer}`` are replaced, ``{{``/``}}``
    are literal braces, any other ``{...}`` is kept as written (a cluster hash tag)."""
    values = {"stream": stream, "group": group, "id": entry_id, "consumer": owner}
    out = bytearray()
    pos = 0
    for m in _PLACEHOLDER.finditer(pattern):
        out += pattern[pos : m.start()].encode()
        token = m.group(0)
        out += b"{" if token == "{{" else b"}" if token == "}}" else values[m.group(1)]
        pos = m.end()
    out += pattern[pos:].encode()
    return bytes(out)


def check_lock_pattern(pattern: str) -> None:
    if "{id}" not in pattern:
        raise UsageError(
            f"--lock-key {pattern!r} has no {{id}}: one lock would cover every entry",
            hint="e.g. --lock-key 'lock:{stream}:{id}'",
        )


# -- finding the pattern a group's workers use ------------------------------------------------

# Lock-key patterns tried when none is given (no --lock-key, no context lock_key), on a
# bounded sample of the entries inspect already read (each consumer's newest ids, the
# oldest rows): at most LOCK_DETECT_IDS ids a group and LOCK_DETECT_KEYS EXISTS a call, in
# one pipeline, and only for a group whose advice would repair something.
LOCK_PATTERNS = (
    "lock:{stream}:{id}",
    "lock:{{{stream}}}:{id}",  # lock:{orders}:<id>, a cluster hash tag
    "lock:{stream}:{group}:{id}",
    "lock:{id}",
)
LOCK_DETECT_PER_CONSUMER = 4
LOCK_DETECT_IDS = 32
LOCK_DETECT_KEYS = 128


def detect_lock_key(
    conn: Connection,
    stream: bytes,
    group: bytes,
    candidates: dict[bytes, list[bytes]],
    sample: Sequence[tuple[bytes, bytes]] = (),
    *,
    budget: int = LOCK_DETECT_KEYS,
) -> tuple[str | None, int]:
    """(the first pattern of :data:`LOCK_PATTERNS` with a lock key held for one of the
    entries, the number of keys probed). ``candidates``: per consumer, ids already read
    (newest first); ``sample``: more (id, owner) pairs (the oldest rows). At most
    LOCK_DETECT_PER_CONSUMER ids a consumer, LOCK_DETECT_IDS in all, ``budget`` EXISTS in one
    pipeline. A key the ACL hides is a key not seen, never an error."""
    from pelctl.redis.errors import redis_errors

    pairs: dict[bytes, bytes] = {}
    for owner, ids in candidates.items():
        for entry_id in ids[:LOCK_DETECT_PER_CONSUMER]:
            pairs.setdefault(entry_id, owner)
    for entry_id, owner in sample:
        pairs.setdefault(entry_id, owner)
    chosen = list(pairs.items())[:LOCK_DETECT_IDS]
    keys = [
        (pattern, lock_key(pattern, stream, group, entry_id, owner))
        for pattern in LOCK_PATTERNS
        for entry_id, owner in chosen
    ]
    keys = keys[: max(budget, 0)]
    if not keys:
        return None, 0
    with redis_errors("EXISTS"):
        pipe = conn.client.pipeline(transaction=False)
        for _pattern, key in keys:
            pipe.exists(key)
        found = pipe.execute(raise_on_error=False)
    for (pattern, _key), n in zip(keys, found, strict=True):
        if isinstance(n, int) and n > 0:
            return pattern, len(keys)
    return None, len(keys)
