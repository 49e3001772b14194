"""What a reclaim loop works on, and whether it is there: the streams, the group, ``--to``.

- Before the first pass every stream and the group must exist: a typo ends the loop with
  exit 3 and a hint naming the groups that do exist (:meth:`TargetWatch.problem`), unless
  the loop waits for them (``--wait-for-group``).
- A missing stream or group is said once (INFO ``waiting`` while waited for, WARNING
  ``stream-skipped`` when it disappeared while the loop ran), again at each summary period
  while waited for (:meth:`TargetWatch.remind`), and ``target-found`` when it is back.
- ``--to C``: C is judged as ``inspect`` judges it before it is handed anything
  (:meth:`TargetWatch.to_alive`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from pelctl.base.binary import escape
from pelctl.base.errors import GroupNotFound, NotFound, StreamNotFound
from pelctl.reclaim.logs import event
from pelctl.reclaim.model import ReclaimConfig, StreamPass
from pelctl.redis.connection import Connection

WAIT_FLAG = "--wait-for-group"


@dataclass
class _Missing:
    """A stream (or its group) that does not exist: since when, and when it was last said."""

    error: str
    since: float
    said: float


class TargetWatch:
    """The loop's streams and group (missing ones, when each was said) and its ``--to``."""

    def __init__(
        self,
        cfg: ReclaimConfig,
        log: logging.Logger,
        clock: Callable[[], float],
        *,
        wait: bool,
        summary_every_s: float,
    ) -> None:
        self.cfg = cfg
        self.log = log
        self.clock = clock
        self.wait = wait
        self.summary_every_s = summary_every_s
        self._missing: dict[bytes, _Missing] = {}
        self._healed: set[bytes] = set()  # streams that had a pass (their group existed)
        # stream -> the last verdict of --to (logged when it changes)
        self._to_seen: dict[bytes, tuple[str, str]] = {}

    @property
    def missing(self) -> list[bytes]:
        return list(self._missing)

    def problem(self, conn: Connection, stream: bytes) -> NotFound | None:
        """Why a pass over ``stream`` cannot run (None: it and the group exist)."""
        from pelctl.core.cmdline import command_line
        from pelctl.core.targets import group_rows

        group = self.cfg.group
        wait = f"or start with {WAIT_FLAG} to wait until it exists"
        try:
            rows = group_rows(conn, stream)
        except StreamNotFound:
            return StreamNotFound(
                f"stream {escape(stream)} not found",
                hint=f"list the streams: {command_line('streams', [])}; {wait}",
            )
        names = [row[b"name"] for row in rows if isinstance(row.get(b"name"), bytes)]
        if group in names:
            return None
        if names:
            listed = ", ".join(escape(n) for n in sorted(names)[:10])
            more = f" and {len(names) - 10} more" if len(names) > 10 else ""
            known = f"groups on {escape(stream)}: {listed}{more}"
        else:
            known = f"{escape(stream)} has no consumer groups"
        return GroupNotFound(
            f"group {escape(group)} not found on stream {escape(stream)}", hint=f"{known}; {wait}"
        )

    def note_missing(self, stream: bytes, error: str) -> None:
        """Logged once: INFO while waiting for a target never seen, WARNING for one that
        disappeared; DEBUG on the passes after that (the summary lists what is missing)."""
        cfg = self.cfg
        if stream in self._missing:
            event(
                self.log,
                logging.DEBUG,
                "stream-skipped",
                stream=stream,
                group=cfg.group,
                error=error,
            )
            return
        now = self.clock()
        self._missing[stream] = _Missing(error, now, now)
        if self.wait and stream not in self._healed:
            event(
                self.log,
                logging.INFO,
                "waiting",
                stream=stream,
                group=cfg.group,
                error=error,
                detail="checked every pass; said again every summary period",
            )
        else:
            event(
                self.log,
                logging.WARNING,
                "stream-skipped",
                stream=stream,
                group=cfg.group,
                error=error,
                detail="the other streams are still healed; retried every "
                "pass, logged again when it is back",
            )

    def note_present(self, stream: bytes) -> None:
        self._healed.add(stream)
        gone = self._missing.pop(stream, None)
        if gone is not None:
            event(
                self.log,
                logging.INFO,
                "target-found",
                stream=stream,
                group=self.cfg.group,
                missing_s=round(self.clock() - gone.since, 3),
            )

    def remind(self) -> None:
        """Every summary period: the targets still waited for, at INFO."""
        now = self.clock()
        if not self.wait or not self.summary_every_s:
            return
        for stream, gone in self._missing.items():
            if stream in self._healed:
                continue  # disappeared while running: in the summary's "missing" list
            if now - gone.said >= self.summary_every_s:
                gone.said = now
                event(
                    self.log,
                    logging.INFO,
                    "waiting",
                    stream=stream,
                    group=self.cfg.group,
                    error=gone.error,
                    waited_s=round(now - gone.since, 3),
                )

    def to_alive(self, conn: Connection, sp: StreamPass) -> bool:
        """With ``--to C``: judge C as ``inspect`` does (:mod:`pelctl.core.liveness`, dead
        after ``max(--idle, 5m)``, ``--lock-key`` counted). A dead suspect gets nothing this
        pass (entries claimed to a dead consumer are stranded: the trap of reference 001);
        an unknown one (Redis < 7.2, no signal) is warned about and served. Logged when the
        verdict changes. Redis counts a claim as C's activity, so this catches a target
        that was quiet before the loop handed it entries, not one that dies later."""
        from pelctl.core.liveness.signals import target_verdict
        from pelctl.core.liveness.verdict import DEAD_SUSPECT, DEFAULT_DEAD_AFTER_MS, UNKNOWN

        cfg = self.cfg
        if cfg.to is None:
            return True
        dead_after = max(cfg.idle_ms, DEFAULT_DEAD_AFTER_MS)
        verdict = target_verdict(
            conn, sp.stream, cfg.group, cfg.to, dead_after_ms=dead_after, lock_key=cfg.lock_key
        )
        if verdict is None:  # not a consumer of the group: a typo unless asked for
            if cfg.create_consumer:
                return True  # the first claim creates it
            from pelctl.core.targets import require_consumer

            require_consumer(
                conn, sp.stream, cfg.group, cfg.to, option="--to", create_flag="--create-consumer"
            )
            return True  # it appeared since target_verdict looked
        seen = (verdict.verdict, verdict.reason)
        changed = self._to_seen.get(sp.stream) != seen
        self._to_seen[sp.stream] = seen
        if verdict.verdict == DEAD_SUSPECT:
            sp.skipped = (
                f"--to {escape(cfg.to)} looks dead ({verdict.reason}): nothing "
                "handed to it this pass"
            )
            event(
                self.log,
                logging.WARNING if changed else logging.DEBUG,
                "target-dead-suspect",
                stream=sp.stream,
                group=cfg.group,
                to=cfg.to,
                reason=verdict.reason,
                detail="entries claimed to a dead consumer would wait for good: start its "
                "worker, or use --strategy requeue",
            )
            return False
        if verdict.verdict == UNKNOWN and changed:
            event(
                self.log,
                logging.WARNING,
                "target-liveness-unknown",
                stream=sp.stream,
                group=cfg.group,
                to=cfg.to,
                reason=verdict.reason,
                detail="make sure its worker runs and reads its own pending entries "
                "(XREADGROUP with id 0)",
            )
        return True
