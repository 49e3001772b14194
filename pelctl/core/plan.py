"""Plan files: ``--plan-out FILE`` saves a repair's plan as JSON; ``pelctl apply FILE`` runs it.

A plan file is reviewable (and trimmable) JSON: what will be done to which entries, as seen
when it was planned. Applying it never trusts it blindly:

- :func:`check_target` refuses a plan made on another server (neither its URL nor its
  ``run_id`` match: a restarted server, or the same one under another name, is accepted),
  on a stream that was deleted and created again since (its ``entries-added`` counter went
  back), or whose stream or group is gone;
- :func:`verify` re-reads each entry (read-only) so the confirmation shows how many are
  still as planned; the scripts then re-verify each entry again, atomically with its
  change: still pending, same owner, same delivery count, still idle enough.

Names and ids are written with :func:`pelctl.core.binary.escape`, so binary names survive.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pelctl.core.binary import escape, unescape
from pelctl.core.errors import ConfigError, UsageError
from pelctl.core.mutations import SKIP_ACTIONS, Options, Plan, PlanItem, Targets, get
from pelctl.core.targets import require_group, require_stream
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors

FORMAT = "pelctl-plan"
VERSION = 1


class PlanRefused(UsageError):
    """The plan does not belong to this server or stream (exit 2)."""


# -- JSON ------------------------------------------------------------------------------------


def _b(value: bytes | None) -> str | None:
    return None if value is None else escape(value)


def _ub(value: Any) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return unescape(value)


def item_to_json(item: PlanItem) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": escape(item.id),
        "owner": escape(item.owner),
        "idle_ms": item.idle_ms,
        "deliveries": item.deliveries,
        "action": item.action,
    }
    if item.note:
        out["note"] = item.note
    return out


def params_json(plan: Plan) -> dict[str, Any]:
    """The plan's targets and options (what the audit log records as ``params``)."""
    data = to_json(plan, items=False)
    return {"targets": data["targets"], "options": data["options"]}


def to_json(plan: Plan, *, items: bool = True) -> dict[str, Any]:
    t, o = plan.targets, plan.options
    return {
        "format": FORMAT,
        "version": VERSION,
        "action": plan.action,
        "stream": escape(plan.stream),
        "group": escape(plan.group),
        "server": plan.server,
        "server_id": plan.server_id,
        "stream_entries_added": plan.stream_added,
        "created_ms": plan.created_ms,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(plan.created_ms / 1000)),
        "targets": {
            "ids": len(t.ids),
            "consumer": _b(t.consumer),
            "min_idle_ms": t.min_idle_ms,
            "min_deliveries": t.min_deliveries,
            "limit": t.limit,
            "all": t.every,
        },
        "options": {
            "to": _b(o.to),
            "dlq": _b(o.dlq),
            "reason": o.reason,
            "lock_key": o.lock_key,
            "max_retries": o.max_retries,
            "field_prefix": o.field_prefix,
            "inactive_ms": o.inactive_ms,
            "reassign_to": _b(o.reassign_to),
            "full": o.full,
        },
        "count": plan.count,
        "items": [item_to_json(i) for i in plan.items] if items else [],
        "missing": [escape(i) for i in plan.missing],
        "notes": list(plan.notes),
    }


def from_json(data: Any) -> Plan:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f'not a pelctl plan (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise ValueError(f"unsupported plan version {data.get('version')!r} (this pelctl reads "
                         f"version {VERSION})")  # fmt: skip
    get(str(data["action"]))  # unknown action -> UsageError
    t = _table(data, "targets")
    o = _table(data, "options")
    if not isinstance(data["items"], list):
        raise ValueError('"items" must be a list')
    items = []
    for raw in data["items"]:
        action = str(raw["action"])
        items.append(
            PlanItem(
                id=_ub(raw["id"]) or b"",
                owner=_ub(raw["owner"]) or b"",
                idle_ms=int(raw["idle_ms"]),
                deliveries=int(raw["deliveries"]),
                action=action,
                note=str(raw.get("note") or ""),
            )
        )
    return Plan(
        action=str(data["action"]),
        stream=_ub(data["stream"]) or b"",
        group=_ub(data["group"]) or b"",
        items=tuple(items),
        targets=Targets(
            consumer=_ub(t.get("consumer")),
            min_idle_ms=_opt_int(t, "min_idle_ms"),
            min_deliveries=_opt_int(t, "min_deliveries"),
            limit=_opt_int(t, "limit"),
            every=bool(t.get("all")),
        ),
        options=Options(
            to=_ub(o.get("to")),
            dlq=_ub(o.get("dlq")),
            reason=_opt_str(o, "reason"),
            lock_key=_opt_str(o, "lock_key"),
            max_retries=_opt_int(o, "max_retries"),
            field_prefix=_opt_str(o, "field_prefix") or "_",
            inactive_ms=_opt_int(o, "inactive_ms"),
            reassign_to=_ub(o.get("reassign_to")),
            full=bool(o.get("full")),
        ),
        missing=tuple(_ub(i) or b"" for i in data.get("missing") or ()),
        server=str(data.get("server") or ""),
        server_id=str(data.get("server_id") or ""),
        stream_added=_opt_int(data, "stream_entries_added"),
        created_ms=_opt_int(data, "created_ms") or 0,
        notes=tuple(str(n) for n in data.get("notes") or ()),
    )


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f'"{key}" must be an object')
    return value


def _opt_int(data: dict[str, Any], key: str) -> int | None:
    """A whole number or null (a hand-edited or damaged plan must not reach the server)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ValueError(f'"{key}" must be a whole number from 0 to 2^63-1, not {value!r:.40}')
    return value


def _opt_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f'"{key}" must be text, not {type(value).__name__}')
    return value


def save(plan: Plan, path: str | os.PathLike[str]) -> Path:
    """Write the plan atomically (temp file + rename), mode 0600: it names entries."""
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".plan-", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(to_json(plan), fh, ensure_ascii=False, indent=1)
            fh.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike[str]) -> Plan:
    source = Path(path).expanduser()
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"plan file {source} not found") from None
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot read plan file {source}: {err}") from None
    try:
        return from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
        raise ConfigError(f"{source} is not a valid pelctl plan: {err}") from None


# -- before applying -------------------------------------------------------------------------


def check_target(conn: Connection, plan: Plan) -> None:
    """Refuse a plan for another server, or for a stream recreated since it was planned."""
    from pelctl.core.repair import entries_added, server_run_id

    here = conn.settings.redacted_url
    run_id = server_run_id(conn, plan.stream)
    if plan.server_id and plan.server_id != run_id and plan.server and plan.server != here:
        raise PlanRefused(
            f"this plan was made on {plan.server}, not on {here}",
            hint="apply it against the server it was planned on (--url / --context)",
        )
    if plan.group:
        require_group(conn, plan.stream, plan.group)
    else:  # a dead-letter plan: a stream, no group
        require_stream(conn, plan.stream)
    added = entries_added(conn, plan.stream)
    if plan.stream_added is not None and added is not None and added < plan.stream_added:
        raise PlanRefused(
            f"stream {escape(plan.stream)} was deleted and created again since the plan "
            f"(entries-added {added:,} < {plan.stream_added:,})",
            hint="make a new plan",
        )


@dataclass(frozen=True)
class Verification:
    """How many plan items are still as planned (read-only check before confirming)."""

    still: int
    changed: dict[str, int]

    @property
    def total(self) -> int:
        return self.still + sum(self.changed.values())


def verify(conn: Connection, plan: Plan) -> Verification:
    """Re-read every actionable item: still pending (consumer: still there), same owner, same
    delivery count, idle at least as planned. Read-only; the scripts check again."""
    items = [i for i in plan.items if i.action not in SKIP_ACTIONS]
    changed: Counter[str] = Counter()
    still = 0
    raw = conn.raw(plan.stream)
    threshold = plan.targets.min_idle_ms or 0
    if plan.mutation.subject == "consumer":
        with redis_errors("XINFO CONSUMERS"):
            rows = raw.execute_command("XINFO", "CONSUMERS", plan.stream, plan.group)
        present = {row[1] for row in rows}
        for item in items:
            if item.id in present:
                still += 1
            else:
                changed["gone"] += 1
        return Verification(still, dict(changed))
    with redis_errors("XPENDING"):
        for start in range(0, len(items), 2_000):
            chunk = items[start : start + 2_000]
            pipe = raw.pipeline(transaction=False)
            for item in chunk:
                pipe.execute_command("XPENDING", plan.stream, plan.group, item.id, item.id, 1)
            for item, reply in zip(chunk, pipe.execute(), strict=True):
                reason = _check(item, reply, threshold)
                if reason is None:
                    still += 1
                else:
                    changed[reason] += 1
    return Verification(still, dict(changed))


def _check(item: PlanItem, reply: list, threshold: int) -> str | None:
    if not reply:
        return "not-pending"
    _id, owner, idle, deliveries = reply[0]
    if owner != item.owner:
        return "owner-changed"
    if int(deliveries) != item.deliveries:
        return "redelivered"
    if int(idle) < max(threshold, item.idle_ms):
        return "not-idle"
    return None
