"""How ``dlq-replay`` copies entries back, exactly once (see docs/dlq.md):

- when the DLQ and the target share a cluster slot (always on a standalone server), one
  script per batch checks the entry is still in the DLQ, XADDs the copy to the target and
  XDELs the entry (``dlq_replay.lua``);
- across slots, three ordered steps: read the entries; on the target's slot, one script
  XADDs each copy *and* records the DLQ id in a marker set beside the target (a sorted set,
  see :func:`pelctl.core.dlq.copies.marker_key`) unless the marker is there already
  (``dlq_replay_add.lua``); then XDEL on the DLQ's slot. A run killed anywhere between them
  is rerun safely: the marker makes the rerun skip the copy and only delete. The DLQ entry
  is never deleted before its copy exists; a copy is never made twice;
- an entry too wide for a script: the same markers, with the client's own XADD inside
  ``WATCH`` / ``MULTI`` (:meth:`Replayer._wide`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import redis.exceptions as rex

from pelctl.core.dlq.common import SKIP_TEXT, DlqItemResult
from pelctl.core.dlq.copies import MARKER_RETENTION_MS, fields_digest, marker_key, replay_fields
from pelctl.core.dlq.envelope import marker_field
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import PlanItem
from pelctl.core.mutations.outcomes import ItemResult
from pelctl.core.script_calls import (
    CALL_BYTES,
    ROUND_BYTES,
    by_bytes,
    call_bytes,
    cross_slot,
    fatal,
    text,
    wide_note,
)
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors
from pelctl.redis.replies import array as reply_array
from pelctl.redis.replies import field_pairs
from pelctl.redis.scripts import Call, round_trip, script, xadd_fits

# Attempts of an entry too wide for a script, when the marker set changes under WATCH.
WATCH_ATTEMPTS = 5


class Replayer:
    """Replays rounds of batches; see the module docstring for the paths."""

    def __init__(self, conn: Connection, plan: Plan, force: bool | None) -> None:
        opts = plan.options
        self.conn = conn
        self.dlq = plan.stream
        self.prefix = opts.field_prefix
        self.keep_envelope = bool(getattr(opts, "keep_envelope", False))
        self.keep_retries = bool(getattr(opts, "keep_retries", False))
        self.no_lineage = opts.no_lineage
        self.create = opts.to is not None  # only an explicit --to may create the target
        # The replay marker field: none without lineage (the scripts then add nothing).
        self.marker = b"" if self.no_lineage else marker_field(self.prefix)
        self.force = force
        self.dlq_client = conn.raw(self.dlq)
        self.same = script("dlq_replay")
        self.add = script("dlq_replay_add")
        self.mark = script("replay_mark")
        self.wide: dict[bytes, int] = {}  # id -> XADD values, of the entries too wide
        self.read_bytes = 0  # payload read so far, and in how many entries: how many
        self.read_entries = 0  # entries one read may hold within ROUND_BYTES

    def xadd_values(self, fields: Sequence[bytes]) -> int:
        """Arguments of the copy's XADD: key, [NOMKSTREAM], *, fields, the marker pair."""
        return 2 + (0 if self.create else 1) + len(fields) + (2 if self.marker else 0)

    def run(self, chunks: Sequence[Sequence[PlanItem]]) -> list[ItemResult]:
        """Replay one round: ``chunks`` are the batches (one script call each, or more when
        they carry many bytes), read in one pipeline and sent in one round trip, unless
        their entries are big: then a few chunks at a time, so the client holds about
        ROUND_BYTES of payload (entries of 1 MiB would otherwise be 1.6 GB a round).
        Connection errors propagate (the outcome of this round is unknown)."""
        out: list[ItemResult] = []
        rest = list(chunks)
        while rest:
            n = self._chunks_per_read(rest)
            out += self._round(rest[:n])
            rest = rest[n:]
        return out

    def _chunks_per_read(self, chunks: Sequence[Sequence[PlanItem]]) -> int:
        if not self.read_entries:
            return 1  # nothing known yet: the first chunk tells the entries' size
        per_entry = self.read_bytes / self.read_entries
        n, total = 0, 0.0
        for chunk in chunks:
            total += len(chunk) * per_entry
            if n and total > ROUND_BYTES:
                break
            n += 1
        return n

    def _round(self, chunks: Sequence[Sequence[PlanItem]]) -> list[ItemResult]:
        out: list[ItemResult] = []
        ids = [item.id for chunk in chunks for item in chunk]
        with redis_errors("dlq replay"):
            pipe = self.dlq_client.pipeline(transaction=False)
            for entry_id in ids:
                pipe.execute_command("XRANGE", self.dlq, entry_id, entry_id)
            rows = pipe.execute()
        by_id = {eid: row[0][1] for eid, row in zip(ids, rows, strict=True) if row}
        self.read_entries += len(by_id)
        self.read_bytes += sum(len(x) for flat in by_id.values() for x in flat)
        out += [DlqItemResult(i, "gone", SKIP_TEXT["gone"]) for i in ids if i not in by_id]
        same_calls: list[tuple[list[PlanItem], Call]] = []
        cross: dict[bytes, list[tuple[PlanItem, list[bytes]]]] = {}
        wide: list[tuple[PlanItem, list[bytes]]] = []
        for chunk in chunks:
            same: list[tuple[PlanItem, list[bytes]]] = []
            for item in chunk:
                flat = by_id.get(item.id)
                if flat is None:
                    continue
                pairs = field_pairs(flat)
                fields = replay_fields(
                    pairs,
                    self.prefix,
                    keep_envelope=self.keep_envelope,
                    keep_retries=self.keep_retries,
                    no_lineage=self.no_lineage,
                )
                values = self.xadd_values(fields)
                if not xadd_fits(values):
                    self.wide[item.id] = values
                    wide.append((item, fields))
                elif cross_slot(self.conn, self.dlq, item.owner, self.force):
                    cross.setdefault(item.owner, []).append((item, fields))
                else:
                    same.append((item, fields))
            for part in by_bytes(same, CALL_BYTES):
                same_calls.append(([i for i, _f in part], self._same_call(part)))
        for trip in by_bytes(same_calls, ROUND_BYTES, lambda c: call_bytes(c[1])):
            with redis_errors("dlq replay"):
                replies = round_trip(self.dlq_client, [c for _i, c in trip])
            for (items, _call), reply in zip(trip, replies, strict=True):
                out += parse_reply(items, reply)
        for target, rows in cross.items():
            out += self._cross_slot(target, rows, max(len(c) for c in chunks))
        for item, fields in wide:
            out.append(self._wide(item, fields))
        return out

    def _same_call(self, rows: list[tuple[PlanItem, list[bytes]]]) -> Call:
        keys: list[bytes] = [self.dlq]
        index: dict[bytes, tuple[int, int]] = {}
        args: list[object] = [self.marker]
        for item, fields in rows:
            if item.owner not in index:
                keys += [item.owner, marker_key(item.owner, self.dlq)]
                index[item.owner] = (len(keys) - 1, len(keys))
            t, m = index[item.owner]
            args += [item.id, t, m, 1 if self.create else 0, len(fields), *fields]
        return Call(self.same, tuple(keys), tuple(args))

    def _cross_slot(
        self, target: bytes, rows: list[tuple[PlanItem, list[bytes]]], batch: int
    ) -> list[ItemResult]:
        """Step 2 on the target's slot (copies + markers), then step 3: XDEL from the DLQ."""
        keys = (target, marker_key(target, self.dlq))
        header: list[object] = [self.marker, 1 if self.create else 0, MARKER_RETENTION_MS]
        calls: list[tuple[list[PlanItem], Call]] = []
        for start in range(0, len(rows), batch):
            for part in by_bytes(rows[start : start + batch], CALL_BYTES):
                args = list(header)
                for item, fields in part:
                    args += [item.id, len(fields), *fields]
                calls.append(([i for i, _f in part], Call(self.add, keys, tuple(args))))
        results: list[ItemResult] = []
        for trip in by_bytes(calls, ROUND_BYTES, lambda c: call_bytes(c[1])):
            with redis_errors("dlq replay"):
                replies = round_trip(self.conn.raw(target), [c for _i, c in trip])
            for (items, _call), reply in zip(trip, replies, strict=True):
                results += parse_reply(items, reply)
        done = [r.id for r in results if r.outcome in ("replayed", "already-replayed")]
        if done:
            # Step 3: every copy (and its marker) exists; only now leave the DLQ.
            with redis_errors("dlq replay"):
                self.dlq_client.execute_command("XDEL", self.dlq, *done)
        return results

    def _wide(self, item: PlanItem, fields: list[bytes]) -> ItemResult:
        """One entry too wide for a script: the marker path, with the client's own XADD.

        On the target's node, on one connection: WATCH the marker set; if the marker is there
        the entry was copied before ('already'); else MULTI (alone: were it refused, the
        commands after it would run outside any transaction), then the XADD of the copy and
        ``replay_mark.lua`` (records the marker only if the XADD wrote the copy), EXEC: the
        copy and its marker are atomic. Then XDEL from the DLQ. A crash before the XDEL
        leaves the copy and its marker: the rerun only deletes (as ``dlq_replay_add.lua``).
        The WATCH stops two runs copying the same entry at the same moment: EXEC fails for
        the later one, which looks again and finds the marker. A copy without a marker
        field (``--no-lineage``) is recognised by its fields instead (``replay_mark.lua``).
        """
        target, note = item.owner, wide_note(self.wide[item.id])
        client = self.conn.raw(target)
        markers = marker_key(target, self.dlq)
        marker_pair = (self.marker, item.id) if self.marker else ()
        xadd: list[object] = [
            "XADD",
            target,
            *(() if self.create else ("NOMKSTREAM",)),
            "*",
            *fields,
            *marker_pair,
        ]
        mark_args: tuple[object, ...] = (self.marker, item.id, MARKER_RETENTION_MS)
        # Without a marker field the script knows the copy by its fields, and by being newer
        # than the target's newest entry read after the WATCH (appended there).
        known = (len(fields), fields_digest(fields)) if not self.marker else None
        with redis_errors("dlq replay"):
            # The script must work inside MULTI, where a NOSCRIPT or an ACL refusal could no
            # longer stop the XADD: load it, and let it try its commands first ('check').
            self.mark.load(client)
            check = reply_array(self.mark.call(client, [target, markers], ["check", *mark_args]))
            if text(check[0]) == "denied":
                raise rex.NoPermissionError(text(check[1]))
            for _attempt in range(WATCH_ATTEMPTS):
                reply = _watched_copy(
                    client,
                    markers,
                    item.id,
                    xadd,
                    (
                        "EVALSHA",
                        self.mark.sha,
                        2,
                        target,
                        markers,
                        "mark",
                        *mark_args,
                        *(known or ()),
                    ),
                    newest_of=target if known else None,
                )
                if reply is not None:
                    break
            else:
                return DlqItemResult(
                    item.id,
                    "fail",
                    "the marker set kept changing (another replay of the same entries?); rerun",
                    note,
                )
            if reply == "already":
                self.dlq_client.execute_command("XDEL", self.dlq, item.id)
                return DlqItemResult(item.id, "already-replayed", SKIP_TEXT["already"], note)
            added, marked = reply
            if isinstance(added, Exception):
                return DlqItemResult(item.id, "fail", f"copy not written: {added}", note)
            if isinstance(marked, Exception) or text(marked[0]) != "replayed":
                if added is None:
                    return DlqItemResult(item.id, "no-target", SKIP_TEXT["no-target"], note)
                # The copy is written but its marker is not (cannot happen: the script's
                # commands were checked): the dead letter stays; a rerun copies it again.
                why = f"copied as {text(added)} but not marked ({marked}): dead letter kept"
                return DlqItemResult(item.id, "fail", why, note)
            self.dlq_client.execute_command("XDEL", self.dlq, item.id)
        return DlqItemResult(item.id, "replayed", text(marked[1]), note)


def _watched_copy(
    client: Any,
    markers: bytes,
    dlq_id: bytes,
    xadd: Sequence[object],
    mark: Sequence[object],
    newest_of: bytes | None = None,
) -> Literal["already"] | list[Any] | None:
    """WATCH markers; 'already' if ``dlq_id`` is marked; else MULTI / XADD / mark / EXEC:
    the two replies, or None when EXEC failed because the marker set changed. With
    ``newest_of`` (a copy without a marker field) the id of that stream's newest entry, read
    after the WATCH ('' when none), is appended to ``mark``. On one pooled connection; on
    any error it is dropped (with whatever WATCH or MULTI it was in)."""
    pool = client.connection_pool
    c = pool.get_connection()

    def cmd(*args: object) -> object:
        c.send_command(*args)
        return c.read_response()  # an error reply raises

    try:
        cmd("WATCH", markers)
        if cmd("ZSCORE", markers, dlq_id) is not None:
            cmd("MULTI")
            cmd("EXEC")  # an empty transaction ends the WATCH
            return "already"
        if newest_of is not None:
            newest: list[Any] | None
            try:
                newest = reply_array(cmd("XREVRANGE", newest_of, "+", "-", "COUNT", 1))
            except rex.ResponseError:  # not a stream: the XADD fails alike, nothing written
                newest = None
            mark = [*mark, newest[0][0] if newest else b""]
        cmd("MULTI")  # refused (ACL): raises here, before anything is queued
        c.send_packed_command(c.pack_commands([xadd, mark, ("EXEC",)]))
        c.read_response()  # QUEUED
        c.read_response()  # QUEUED
        try:
            return c.read_response()  # [XADD reply, mark reply], or None (WATCH)
        except rex.ExecAbortError as err:  # nothing ran; an ACL refusal of EXEC says so
            if "NOPERM" in str(err):
                raise rex.NoPermissionError(str(err)) from err
            raise
    except BaseException:
        c.disconnect()
        raise
    finally:
        pool.release(c)


def parse_reply(items: Sequence[PlanItem], reply: object) -> list[ItemResult]:
    if isinstance(reply, Exception):  # this call failed on the server: nothing of it ran
        fatal(reply)  # an ACL refusal is the whole command's failure (exit 4)
        return [DlqItemResult(item.id, "fail", f"script error: {reply}") for item in items]
    flat = reply_array(reply)
    out: list[ItemResult] = []
    for n, item in enumerate(items):
        status, detail = text(flat[2 * n]), text(flat[2 * n + 1])
        if status == "replayed":
            out.append(DlqItemResult(item.id, "replayed", detail))
        elif status == "wide":  # the client sends only entries that fit: not expected
            out.append(
                DlqItemResult(
                    item.id,
                    "fail",
                    f"too wide for a script ({detail} XADD values): nothing written",
                )
            )
        elif status == "already":
            out.append(DlqItemResult(item.id, "already-replayed", SKIP_TEXT["already"]))
        elif status == "skip":
            out.append(DlqItemResult(item.id, detail, SKIP_TEXT.get(detail, "")))
        else:
            out.append(DlqItemResult(item.id, "fail", detail))
    return out
