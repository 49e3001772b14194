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

The lease stays (``lease.lua`` restarts the entry's idle time): without it a consumer's
``XAUTOCLAIM`` could take the entry between the copy and the acknowledgement, and the copy
would then duplicate a message being processed. So after a crash a rerun recognises the
copies of the entries it selects again: by consumer, by delivery count, by id; a rerun by
``--idle`` only once they are idle again, which is past the default window.

The window is the target stream's, set by its owner with ``XCFGSET`` (pelctl never changes
it): ``idmp-duration`` seconds (default 100) after the first copy was written, and
``idmp-maxsize`` ids kept per producer (default 100; the oldest goes first). A rerun later
than the duration, or after more than ``idmp-maxsize`` newer copies of the same group, can
duplicate again, as on servers without IDMP. So a batch of the ordered path holds at most
half of ``idmp-maxsize`` entries (:func:`batch_limit`), and a run stops at a failed
acknowledgement: the interrupted batch's copies are then the producer's newest, and stay
remembered while the rerun writes up to half a window of other copies before reaching them
(entries selected since, ahead of them in id order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from pelctl.core.models import parse_id
from pelctl.core.mutations import ItemResult
from pelctl.redis.connection import Connection
from pelctl.redis.replies import pairs

PRODUCER_PREFIX = b"pelctl:"
# The server's default idmp-maxsize (stream-idmp-maxsize), when it cannot be read.
DEFAULT_MAXSIZE = 100


def producer(stream: bytes, group: bytes) -> bytes:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (stream, group):
        digest.update(b"%d:" % len(part) + part)
    return PRODUCER_PREFIX + digest.hexdigest()[:16].encode()


def idempotent_id(target: bytes, entry_id: bytes) -> bytes:
    """``target`` is ``dlq`` or ``stream`` (where the copy goes), ``entry_id`` the source's."""
    return target + b":" + entry_id


REFUSED_NOTE = "copy written by an earlier run: the server refused a second one (IDMP)"


def window(conn: Connection, target: bytes) -> int:
    """How many copies of one producer ``target`` remembers (``idmp-maxsize``), from one
    ``XINFO STREAM`` (O(1): no FULL); the default for a stream that does not exist yet."""
    raw = conn.raw(target)
    try:
        info = pairs(raw.execute_command("XINFO", "STREAM", target))
    except Exception:  # noqa: BLE001 - no such key: XADD creates it with the server's default
        return _server_default(raw)
    return max(1, int(info.get(b"idmp-maxsize", DEFAULT_MAXSIZE)))


def _server_default(raw: Any) -> int:
    """``stream-idmp-maxsize``, the setting a new stream starts with; the server's own default
    when CONFIG is not allowed (managed services, ACL users without it)."""
    try:
        reply = raw.execute_command("CONFIG", "GET", "stream-idmp-maxsize")
        values = list(reply.values()) if isinstance(reply, dict) else reply[1::2]
        return max(1, int(values[0]))
    except Exception:  # noqa: BLE001 - CONFIG denied or renamed: the documented default
        return DEFAULT_MAXSIZE


def batch_limit(conn: Connection, targets: list[bytes]) -> int:
    """The most entries one batch of the ordered path may copy: half the smallest window of
    its targets. The server keeps a producer's newest ``idmp-maxsize`` ids; the copies of an
    interrupted batch are the newest, and a rerun may write other copies first (entries
    selected since, ahead in id order): half a window of them leaves the whole interrupted
    batch remembered."""
    return max(1, min(window(conn, t) for t in targets) // 2)


def refused(now: object, new_id: object) -> bool:
    """Whether an ``XADD ... IDMP`` answered an earlier copy's id instead of adding one.

    ``now`` is the reply of ``TIME`` sent on the same node just before the ``XADD``: a new
    entry's id is at least that millisecond (ids never go back), an earlier copy's is older
    (written by an earlier run). Only said in the result, never decided on: a stream whose
    ids run ahead of the clock hides a refusal (the copy is then said written)."""
    if not isinstance(now, list | tuple) or len(now) != 2 or not isinstance(new_id, bytes):
        return False
    try:
        clock_ms = int(now[0]) * 1000 + int(now[1]) // 1000
        return parse_id(new_id)[0] < clock_ms
    except ValueError:
        return False


def after_a_crash(conn: Connection) -> str:
    """What the result's note says a crash between the copy and the ack can do."""
    if conn.caps.has("idmp"):
        return (
            "a crash can duplicate, never lose; here the server refuses the rerun's duplicate "
            "(IDMP) within the target's window"
        )
    return "a crash can duplicate, never lose"


def refused_notes(results: Iterable[ItemResult]) -> list[str]:
    """The result's note on copies the server refused (an interrupted run had written them)."""
    n = sum(1 for r in results if REFUSED_NOTE in r.note)
    if not n:
        return []
    return [
        f"{n:,} entries already had their copy, written by an interrupted run: the server "
        "answered its id (IDMP), nothing was written again"
    ]
