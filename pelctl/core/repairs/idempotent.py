"""Idempotent copies on Redis 8.6+ (``XADD key IDMP producer-id idempotent-id * ...``).

Where a copy and the acknowledgement of its source cannot be one script (a dead letter in
another cluster slot, an entry too wide for a script), pelctl writes the copy first and
acknowledges after: a crash in between leaves the entry pending with its copy written, and a
later run copies it again. On a server with idempotent producers the copy carries an IDMP
pair derived from the source entry, so the server answers a repeated write with the first
copy's id and adds nothing: the rerun goes straight on to the verified acknowledgement.

- The producer id names where the entries come from, ``pelctl:<digest of stream and
  group>``: one producer per source group, stable across runs and hosts (a rerun must be
  recognised whoever runs it), and runs on unrelated groups never share a window.
- The idempotent id names the copy: the target it goes to (``dlq`` or ``stream``) and the
  source entry's id. An entry is acknowledged once its copy exists and is never pending
  again under the same id, so the pair is never reused for a different copy.

The window is the target stream's, set by its owner with ``XCFGSET`` (pelctl never changes
it): ``idmp-duration`` seconds (default 100) and ``idmp-maxsize`` ids kept per producer
(default 100). A rerun later than the duration, or after more than ``idmp-maxsize`` newer
copies of the same group, can duplicate again, as on servers without IDMP; so a batch of the
ordered path holds at most ``idmp-maxsize`` entries (:func:`window`).
"""

from __future__ import annotations

import hashlib

from pelctl.redis.connection import Connection
from pelctl.redis.replies import pairs

PRODUCER_PREFIX = b"pelctl:"
# The server's defaults (XINFO STREAM of a stream that does not exist yet, or has no setting).
DEFAULT_MAXSIZE = 100


def producer(stream: bytes, group: bytes) -> bytes:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (stream, group):
        digest.update(b"%d:" % len(part) + part)
    return PRODUCER_PREFIX + digest.hexdigest()[:16].encode()


def idempotent_id(target: bytes, entry_id: bytes) -> bytes:
    """``target`` is ``dlq`` or ``stream`` (where the copy goes), ``entry_id`` the source's."""
    return target + b":" + entry_id


def window(conn: Connection, target: bytes) -> int:
    """How many copies of one producer ``target`` remembers (``idmp-maxsize``), from one
    ``XINFO STREAM`` (O(1): no FULL); the default for a stream that does not exist yet."""
    raw = conn.raw(target)
    try:
        info = pairs(raw.execute_command("XINFO", "STREAM", target))
    except Exception:  # noqa: BLE001 - no such key (XADD creates it with the defaults)
        return DEFAULT_MAXSIZE
    return max(1, int(info.get(b"idmp-maxsize", DEFAULT_MAXSIZE)))
