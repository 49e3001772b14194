"""Plan files: ``--plan-out FILE`` saves a repair's plan as JSON; ``pelctl apply FILE`` runs it.

A plan file is reviewable JSON, **sealed** and **bound** to what it was made for; applying it
never trusts it blindly:

- :func:`load` refuses a file bigger than :data:`MAX_BYTES` or with more than
  :data:`MAX_ITEMS` items, a file that is not a whole plan, and a plan whose seal does not
  verify: an HMAC-SHA256 over a canonical serialisation of the whole plan (header and
  items), keyed with the user's plan key (:func:`plan_key`: ``$XDG_STATE_HOME/pelctl/
  plan.key``, made on first use, mode 0600; ``PELCTL_PLAN_KEY`` overrides it so a team can
  share plans). Any edit — the action, the group, an id, ``server_id``, an item removed — or
  a plan sealed with another key is refused (exit 2). To narrow a plan, make a new one.
  Then every field is validated: only the repairs that ``--plan-out`` saves, stream ids
  (``ms-seq``, both parts below 2^64), consumer names, item actions the repair can produce;
- :func:`check_target` refuses a plan made on another server (its ``run_id`` must be the
  one the plan recorded; a plan without one is refused, never waved through), on another
  database (``db``), on a stream that was deleted and created again since (its
  ``entries-added`` counter went back), or whose stream or group is gone;
- :func:`verify` re-reads each entry (read-only) so the confirmation shows how many are
  still as planned; the scripts then re-verify each entry again, atomically with its
  change: still pending, same owner, same delivery count, still idle enough.

Names and ids are written with :func:`pelctl.base.binary.escape`, so binary names survive.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pelctl.base.binary import escape, unescape
from pelctl.base.errors import ConfigError, OperationFailed, PelctlError, UsageError
from pelctl.base.paths import plan_key_path
from pelctl.core.mutations.declaration import Plan, get
from pelctl.core.mutations.model import SKIP_ACTIONS, Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import APPLIED_OUTCOMES, FAILED_OUTCOMES, planned_outcome
from pelctl.core.targets import require_group, require_stream
from pelctl.redis.connection import Connection
from pelctl.redis.errors import redis_errors

FORMAT = "pelctl-plan"
# 1: unsealed plans (pelctl before the seal), refused. 2: items with "owner" and "action"
# (the planner's verbs). 3: the JSON vocabulary of every output (docs/formats.md): items with
# "consumer" and "outcome" (what apply will report), targets "id_count", options
# "consumer_min_idle_ms". Version 2 files are still read.
VERSION = 3
READABLE = (2, 3)
# The caps of a plan file: a plan is for a reviewed repair, not a whole 10M-entry PEL.
MAX_ITEMS = 50_000
MAX_BYTES = 8 * 1024 * 1024
SEAL_ALG = "HMAC-SHA256"
KEY_ENV = "PELCTL_PLAN_KEY"
MIN_KEY_CHARS = 32
MAX_NOTE_CHARS = 4_096
# The repairs a plan file may hold, and the item actions each one's planner produces
# (dlq replay/purge are not saved as plan files).
ITEM_ACTIONS: dict[str, frozenset[str]] = {
    "claim": frozenset({"claim", "skip", "refuse"}),
    "ack": frozenset({"ack", "skip", "refuse"}),
    "requeue": frozenset({"requeue", "dlq", "ack-ghost", "skip", "refuse"}),
    "dlq-move": frozenset({"dlq", "ack-ghost", "skip", "refuse"}),
    "consumers-prune": frozenset({"delete", "reassign+delete", "refuse", "skip"}),
    "ghosts-fix": frozenset({"ack-ghost", "skip", "refuse"}),
}
SHARE_HINT = (
    "apply it as the user and on the machine that made it, or share one key: set "
    f"{KEY_ENV} to the same secret where the plan is made and where it is applied "
    "(docs/safety.md)"
)
NARROW_HINT = (
    "a plan is sealed: to narrow it, make a new plan with narrower filters "
    "(--limit, --consumer, --idle, --min-deliveries)"
)

_STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")  # ASCII digits only (fullmatch)
_TOKEN = re.compile(r"[a-z][a-z0-9-]{0,39}")  # an outcome name (fullmatch)
# Version 3 items: the planner's action behind each outcome a plan file may hold (a skip is
# written as its reason; a prune's "deleted" is "reassign+delete" for a consumer holding
# entries, since only --reassign-to lets one be deleted).
_ENTRY_ITEM_KEYS = frozenset({"id", "consumer", "idle_ms", "deliveries", "outcome", "note"})
_CONSUMER_ITEM_KEYS = frozenset({"consumer", "idle_ms", "pending", "outcome", "note"})
_ACTION_OF = {"requeued": "requeue", "dlq": "dlq", "claimed": "claim", "acked": "ack",
              "ghost": "ack-ghost", "deleted": "delete", "refused": "refuse"}  # fmt: skip
_KEY_ID = re.compile(r"[0-9a-f]{16}")


class PlanRefused(UsageError):
    """The plan does not belong to this server, database or stream, was changed after it
    was made, or was sealed with another key (exit 2). Nothing is changed."""


# -- the key and the seal ----------------------------------------------------------------------


def plan_key(*, create: bool = False) -> tuple[bytes, str] | None:
    """(key, where it came from): ``PELCTL_PLAN_KEY``, else the key file (made when
    ``create`` and missing: 32 random bytes as hex, mode 0600, next to the audit log).
    None when there is no key and ``create`` is false."""
    text = os.environ.get(KEY_ENV, "").strip()
    if text:
        if len(text) < MIN_KEY_CHARS:
            raise UsageError(
                f"{KEY_ENV} is too short ({len(text)} characters): a plan key needs at least "
                f"{MIN_KEY_CHARS}",
                hint="make one with: openssl rand -hex 32",
            )
        return text.encode(), KEY_ENV
    path = plan_key_path()
    try:
        text = _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
        text = _create_key(path)
    if len(text) < MIN_KEY_CHARS:
        raise ConfigError(
            f"the plan key {path} is damaged (shorter than {MIN_KEY_CHARS} characters)",
            hint="delete it: the next --plan-out makes a new one (plans sealed with the old "
            "key will no longer apply)",
        )
    return text.encode(), str(path)


def _read_key(path: Path) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
                os.fchmod(fh.fileno(), 0o600)
            return fh.read(4_096).strip()
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read the plan key {path}: "
                          f"{getattr(err, 'strerror', None) or err}") from None  # fmt: skip


def _create_key(path: Path) -> str:
    """Write a new key atomically: a reader never sees half a key, and of two processes
    creating it at once one wins and both use its key."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".plan-key-", dir=path.parent)  # mode 0600
        try:
            os.write(fd, (secrets.token_hex(32) + "\n").encode())
            os.fsync(fd)
            os.close(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another pelctl made it first: use that one
        finally:
            os.unlink(tmp)
        return _read_key(path)
    except (OSError, ConfigError) as err:
        why = err.strerror if isinstance(err, OSError) else err.message
        raise OperationFailed(
            f"cannot create the plan key {path}: {why}",
            hint=f"fix the state directory's permissions, or set {KEY_ENV}",
        ) from None


def key_id(key: bytes) -> str:
    """A short fingerprint of a key (for messages; it reveals nothing of the key)."""
    return hashlib.sha256(b"pelctl plan key id\0" + key).hexdigest()[:16]


def canonical(doc: dict[str, Any]) -> bytes:
    """The bytes the seal covers: the whole plan but its ``seal``, as sorted, compact,
    ASCII-only JSON (the same for any layout of the file)."""
    body = {k: v for k, v in doc.items() if k != "seal"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")  # fmt: skip


def _digest(key: bytes, doc: dict[str, Any]) -> str:
    return hmac.new(key, b"pelctl-plan/2\n" + canonical(doc), hashlib.sha256).hexdigest()


def seal(doc: dict[str, Any], key: bytes | None = None) -> dict[str, Any]:
    """``doc`` with its ``seal`` (the user's key unless ``key`` is given)."""
    if key is None:
        found = plan_key(create=True)
        assert found is not None
        key = found[0]
    out = {k: v for k, v in doc.items() if k != "seal"}
    out["seal"] = {"alg": SEAL_ALG, "key_id": key_id(key), "digest": _digest(key, out)}
    return out


def check_seal(doc: dict[str, Any], source: str = "the plan") -> None:
    """Refuse (exit 2) a plan that is not sealed, was changed after it was sealed, or was
    sealed with a key this user does not have."""
    mark = doc.get("seal")
    if not isinstance(mark, dict) or not isinstance(mark.get("digest"), str):
        raise PlanRefused(f"{source} is not sealed: pelctl apply only runs plans it sealed",
                          hint="make a new plan with --plan-out")  # fmt: skip
    if mark.get("alg") != SEAL_ALG:
        raise PlanRefused(f"{source} has an unknown seal (alg {str(mark.get('alg'))[:20]!r})",
                          hint="make a new plan with --plan-out")  # fmt: skip
    found = plan_key()
    if found is None:
        raise PlanRefused(
            f"{source} was sealed with a key this user does not have (no {plan_key_path()} "
            f"and no {KEY_ENV})",
            hint=SHARE_HINT,
        )
    key, where = found
    try:
        expected = _digest(key, doc)
    except (TypeError, ValueError):  # NaN or a value JSON cannot hold: not what was sealed
        expected = ""
    if hmac.compare_digest(expected, mark["digest"]):
        return
    theirs = str(mark.get("key_id") or "")
    if theirs != key_id(key):
        shown = theirs if _KEY_ID.fullmatch(theirs) else "unknown"
        raise PlanRefused(
            f"{source} was sealed with another key (key {shown}), not with this user's "
            f"({where}: key {key_id(key)})",
            hint=SHARE_HINT,
        )
    raise PlanRefused(f"{source} was changed after it was made: its seal does not match",
                      hint=NARROW_HINT)  # fmt: skip


# -- JSON ------------------------------------------------------------------------------------


def _b(value: bytes | None) -> str | None:
    return None if value is None else escape(value)


def _ub(value: Any) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return unescape(value)


def item_to_json(item: PlanItem, consumers: bool = False) -> dict[str, Any]:
    """One plan item as plan files and dry runs write it: an entry ``{"id", "consumer",
    "idle_ms", "deliveries", "outcome", "note"}``, or for ``consumers prune`` (``consumers``)
    a consumer ``{"consumer", "idle_ms", "pending", "outcome", "note"}``; ``outcome`` is what
    applying it will report (:func:`pelctl.core.mutations.planned_outcome`)."""
    if consumers:
        return {
            "consumer": escape(item.id),
            "idle_ms": item.idle_ms,
            "pending": item.deliveries,
            "outcome": planned_outcome(item),
            "note": item.note,
        }
    return {
        "id": escape(item.id),
        "consumer": escape(item.owner),
        "idle_ms": item.idle_ms,
        "deliveries": item.deliveries,
        "outcome": planned_outcome(item),
        "note": item.note,
    }


def params_json(plan: Plan) -> dict[str, Any]:
    """The plan's targets and options (what the audit log records as ``params``)."""
    data = to_json(plan, items=False)
    return {"targets": data["targets"], "options": data["options"]}


def to_json(plan: Plan, *, items: bool = True) -> dict[str, Any]:
    t, o = plan.targets, plan.options
    consumers = plan.mutation.subject == "consumer"
    return {
        "format": FORMAT,
        "version": VERSION,
        "action": plan.action,
        "stream": escape(plan.stream),
        "group": escape(plan.group),
        "server": plan.server,
        "server_id": plan.server_id,
        "db": plan.db,
        "stream_entries_added": plan.stream_added,
        "created_ms": plan.created_ms,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(plan.created_ms / 1000)),
        "targets": {
            "id_count": len(t.ids),
            "consumer": _b(t.consumer),
            "min_idle_ms": t.min_idle_ms,
            "min_deliveries": t.min_deliveries,
            "limit": t.limit,
            "all": t.every,
            "below_deliveries": t.below_deliveries,
        },
        "options": {
            "to": _b(o.to),
            "dlq": _b(o.dlq),
            "reason": o.reason,
            "lock_key": o.lock_key,
            "max_retries": o.max_retries,
            "field_prefix": o.field_prefix,
            "no_lineage": o.no_lineage,
            "consumer_min_idle_ms": o.inactive_ms,
            "reassign_to": _b(o.reassign_to),
            "full": o.full,
            "assume_dead": o.assume_dead,
            "create_consumer": o.create_consumer,
        },
        "count": plan.count,
        "items": [item_to_json(i, consumers) for i in plan.items] if items else [],
        "missing": [escape(i) for i in plan.missing],
        "notes": list(plan.notes),
    }


def from_json(data: Any) -> Plan:
    """A plan from its JSON, every field validated (raises ValueError, KeyError, TypeError
    or UsageError). The seal is checked by :func:`load`, before this."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f'not a pelctl plan (no "format": "{FORMAT}")')
    version = data.get("version")
    if version not in READABLE:
        raise ValueError(f"unsupported plan version {version!r:.20} (this pelctl reads "
                         f"versions {', '.join(map(str, READABLE))})")  # fmt: skip
    action = data["action"]
    if not isinstance(action, str) or action not in ITEM_ACTIONS:
        raise ValueError(f"a plan file cannot hold {str(action)[:40]!r} (only "
                         f"{', '.join(ITEM_ACTIONS)})")  # fmt: skip
    mutation = get(action)
    t = _table(data, "targets")
    o = _table(data, "options")
    raw_items = data["items"]
    if not isinstance(raw_items, list):
        raise ValueError('"items" must be a list')
    if len(raw_items) > MAX_ITEMS:
        raise ValueError(f"{len(raw_items):,} items, more than the {MAX_ITEMS:,} a plan may hold")
    allowed = ITEM_ACTIONS[action]
    consumers = mutation.subject == "consumer"
    read_item = _item if version == 2 else _item_v3
    items = [read_item(raw, allowed, consumers) for raw in raw_items]
    seen = Counter(i.id for i in items)
    twice = [k for k, n in seen.items() if n > 1]
    if twice:
        raise ValueError(f"item {escape(twice[0])} is listed {seen[twice[0]]} times")
    missing = data.get("missing") or []
    if not isinstance(missing, list) or len(missing) > MAX_ITEMS:
        raise ValueError('"missing" must be a list of stream ids')
    options = Options(
        to=_name(o, "to"),
        dlq=_name(o, "dlq"),
        reason=_opt_str(o, "reason"),
        lock_key=_opt_str(o, "lock_key"),
        max_retries=_opt_int(o, "max_retries"),
        field_prefix=_opt_str(o, "field_prefix") or "_",
        no_lineage=_bool(o, "no_lineage"),  # absent (older plans): lineage on
        inactive_ms=_opt_int(o, "inactive_ms" if version == 2 else "consumer_min_idle_ms"),
        reassign_to=_name(o, "reassign_to"),
        full=_bool(o, "full"),
        assume_dead=_bool(o, "assume_dead"),
        create_consumer=_bool(o, "create_consumer"),
    )
    for needed in mutation.needs:
        if getattr(options, needed) in (None, ""):
            raise ValueError(f'{action} needs options "{needed}"')
    if options.reassign_to is None and any(i.action == "reassign+delete" for i in items):
        raise ValueError("a consumer holding entries is deleted only with --reassign-to")
    from pelctl.core.executor import check_lineage

    check_lineage(options)
    if options.lock_key is not None:
        from pelctl.core.locks import check_lock_pattern

        check_lock_pattern(options.lock_key)
    plan = Plan(
        action=action,
        stream=_name(data, "stream", required=True) or b"",
        group=_name(data, "group", required=True) or b"",
        items=tuple(items),
        targets=Targets(
            consumer=_name(t, "consumer"),
            min_idle_ms=_opt_int(t, "min_idle_ms"),
            min_deliveries=_opt_int(t, "min_deliveries"),
            limit=_opt_int(t, "limit"),
            every=_bool(t, "all"),
            below_deliveries=_opt_int(t, "below_deliveries"),
        ),
        options=options,
        missing=tuple(_stream_id(i) for i in missing),
        server=_opt_str(data, "server") or "",
        server_id=_opt_str(data, "server_id") or "",
        db=_opt_int(data, "db"),
        stream_added=_opt_int(data, "stream_entries_added"),
        created_ms=_opt_int(data, "created_ms") or 0,
        notes=tuple(_note(n) for n in _list(data, "notes")),
    )
    count = data.get("count")
    if count is not None and count != plan.count:
        raise ValueError(f'"count" is {str(count)[:20]} but {plan.count:,} items will act')
    return plan


def _item_v3(raw: Any, allowed: frozenset[str], consumers: bool) -> PlanItem:
    """A version 3 item: the outcome it was planned to have, back to the planner's action."""
    if not isinstance(raw, dict):
        raise ValueError("every item must be an object")
    keys = _CONSUMER_ITEM_KEYS if consumers else _ENTRY_ITEM_KEYS
    unknown = sorted(set(raw) - keys)
    if unknown:
        raise ValueError(f"item key {unknown[0][:40]!r} is not one a plan item has "
                         f"({', '.join(sorted(keys))})")  # fmt: skip
    if "outcome" not in raw:
        raise ValueError('a version 3 plan item has an "outcome"')
    outcome = raw["outcome"]
    if not isinstance(outcome, str) or not _TOKEN.fullmatch(outcome):
        raise ValueError(f"item outcome {str(outcome)[:40]!r} is not an outcome name")
    note = _note(raw.get("note") or "")
    if consumers:  # consumers prune: the item is a consumer, by name
        item_id = owner = _name(raw, "consumer", required=True) or b""
        deliveries = _int(raw, "pending")
    else:
        item_id = _stream_id(raw["id"])
        owner = _name(raw, "consumer", required=True) or b""
        deliveries = _int(raw, "deliveries")
    if outcome in _ACTION_OF:
        action = _ACTION_OF[outcome]
        if action == "delete" and deliveries:
            action = "reassign+delete"
    elif outcome in APPLIED_OUTCOMES or outcome in FAILED_OUTCOMES:
        raise ValueError(f"item outcome {outcome!r} is not one a plan makes")
    else:  # a skip, written as its reason
        if outcome != (note or "skip"):
            raise ValueError(f"item outcome {outcome!r} does not match its note {note[:40]!r}")
        action = "skip"
    if action not in allowed:
        raise ValueError(f"item outcome {outcome!r} is not one this repair makes")
    return PlanItem(id=item_id, owner=owner, idle_ms=_int(raw, "idle_ms"),
                    deliveries=deliveries, action=action, note=note)  # fmt: skip


def _item(raw: Any, allowed: frozenset[str], consumers: bool) -> PlanItem:
    """A version 2 item (``owner``, ``action``)."""
    if not isinstance(raw, dict):
        raise ValueError("every item must be an object")
    if "action" not in raw:
        raise ValueError('a version 2 plan item has an "action" (version 3 items have '
                         'an "outcome")')  # fmt: skip
    action = raw["action"]
    if action not in allowed:
        raise ValueError(f"item action {str(action)[:40]!r} is not one this repair makes "
                         f"({', '.join(sorted(allowed))})")  # fmt: skip
    if consumers:  # consumers prune: the item is a consumer, by name
        name = _name(raw, "id", required=True) or b""
        if _name(raw, "owner", required=True) != name:
            raise ValueError(f"item {escape(name)}: a consumer's owner is its own name")
        item_id, owner = name, name
    else:
        item_id, owner = _stream_id(raw["id"]), _name(raw, "owner", required=True) or b""
    return PlanItem(
        id=item_id,
        owner=owner,
        idle_ms=_int(raw, "idle_ms"),
        deliveries=_int(raw, "deliveries"),
        action=action,
        note=_note(raw.get("note") or ""),
    )


def _stream_id(value: Any) -> bytes:
    """A full stream id ``ms-seq`` with both parts below 2^64 (what XPENDING returns)."""
    if not isinstance(value, str) or not _STREAM_ID.fullmatch(value):
        raise ValueError(f"not a stream id: {str(value)[:40]!r} (ids look like "
                         "1700000000000-0)")  # fmt: skip
    if any(int(part) >= 2**64 for part in value.split("-")):
        raise ValueError(f"not a stream id: {value!r} (a part is 2^64 or more)")
    return value.encode()


def _name(data: dict[str, Any], key: str, *, required: bool = False) -> bytes | None:
    """A stream, group or consumer name (escaped text); ``required``: present, not empty."""
    value = _ub(data.get(key))
    if required and not value:
        raise ValueError(f'"{key}" must be a name, not {data.get(key)!r:.40}')
    return value


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f'"{key}" must be an object')
    return value


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise ValueError(f'"{key}" must be a list')
    return value


def _int(data: dict[str, Any], key: str) -> int:
    value = _opt_int(data, key)
    if value is None:
        raise ValueError(f'"{key}" must be a whole number')
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


def _bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f'"{key}" must be true or false')
    return bool(value)


def _note(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_NOTE_CHARS:
        raise ValueError(f"a note must be text of at most {MAX_NOTE_CHARS:,} characters")
    return value


def dumps(doc: dict[str, Any]) -> bytes:
    """The file's layout: one top-level key a line, one item a line (easy to review)."""
    lines = []
    for key, value in doc.items():
        if key == "items" and value:
            body = ",\n".join("  " + json.dumps(i, ensure_ascii=False) for i in value)
            text = "[\n" + body + "\n ]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        lines.append(f" {json.dumps(key)}: {text}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def save(plan: Plan, path: str | os.PathLike[str]) -> Path:
    """Seal the plan and write it atomically (temp file + rename), mode 0600: it names
    entries. Refused beyond :data:`MAX_ITEMS` items or :data:`MAX_BYTES`."""
    if plan.action not in ITEM_ACTIONS:
        raise UsageError(f"{plan.action} plans cannot be saved to a file (plan files hold "
                         f"{', '.join(ITEM_ACTIONS)})")  # fmt: skip
    if not plan.server_id:
        raise UsageError("the server does not report a run_id (INFO server): a plan file "
                         "could not be bound to it", hint="run the repair directly, after a "
                         "--dry-run")  # fmt: skip
    too_big = "narrow it (--limit N, --consumer, --idle: several smaller plans), or run the "
    too_big += "repair directly after a --dry-run"
    if len(plan.items) > MAX_ITEMS:
        raise UsageError(f"the plan has {len(plan.items):,} items, more than the "
                         f"{MAX_ITEMS:,} a plan file may hold", hint=too_big)  # fmt: skip
    blob = dumps(seal(to_json(plan)))
    if len(blob) > MAX_BYTES:
        raise UsageError(f"the plan would take {len(blob):,} bytes, more than the "
                         f"{MAX_BYTES:,} a plan file may", hint=too_big)  # fmt: skip
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".plan-", suffix=".json", dir=target.parent)
    except OSError as err:
        raise OperationFailed(f"cannot write the plan file {target}: "
                              f"{err.strerror or err}") from None  # fmt: skip
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise OperationFailed(f"cannot write the plan file {target}: "
                              f"{err.strerror or err}") from None  # fmt: skip
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike[str]) -> Plan:
    """Read, check the seal, validate. Refused (exit 2): too big, not a whole plan, not
    sealed, changed, sealed with another key, or a field that is not what pelctl writes."""
    source = Path(path).expanduser()
    try:
        with open(source, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            blob = b"" if size > MAX_BYTES else fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"plan file {source} not found") from None
    except OSError as err:
        raise ConfigError(f"cannot read plan file {source}: {err.strerror or err}") from None
    if size > MAX_BYTES or len(blob) > MAX_BYTES:
        raise PlanRefused(f"plan file {source} is larger than the {MAX_BYTES:,} bytes a plan "
                          "may take", hint=NARROW_HINT)  # fmt: skip
    try:
        data = json.loads(blob.decode("utf-8"))
    except ValueError as err:
        raise ConfigError(f"cannot read plan file {source}: not a whole JSON document "
                          f"(truncated or damaged): {err}") from None  # fmt: skip
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f'{source} is not a valid pelctl plan (no "format": "{FORMAT}")')
    if data.get("version") == 1:
        raise PlanRefused(f"{source} was made by an older pelctl: version 1 plans are not "
                          "sealed", hint="make a new plan with --plan-out")  # fmt: skip
    if data.get("version") not in READABLE:
        raise ConfigError(f"{source}: unsupported plan version {data.get('version')!r:.20} "
                          f"(this pelctl reads versions "
                          f"{', '.join(map(str, READABLE))})")  # fmt: skip
    check_seal(data, f"plan {source}")
    try:
        return from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
        raise ConfigError(f"{source} is not a valid pelctl plan: {err}") from None
    except PelctlError as err:
        raise ConfigError(f"{source} is not a valid pelctl plan: {err.message}") from None


# -- before applying -------------------------------------------------------------------------


def check_target(conn: Connection, plan: Plan) -> None:
    """Refuse a plan for another server or database, or for a stream recreated since."""
    from pelctl.core.executor import entries_added, server_db, server_run_id

    here = conn.settings.redacted_url
    if not plan.server_id:
        raise PlanRefused("this plan does not say which server it was made on (no server_id)",
                          hint="make a new plan with --plan-out")  # fmt: skip
    run_id = server_run_id(conn, plan.stream)
    if plan.server_id != run_id:
        raise PlanRefused(
            f"this plan was made on {plan.server or 'another server'} (run_id "
            f"{plan.server_id[:12]}), not on {here} (run_id {run_id[:12] or 'unknown'})",
            hint="apply it against the server it was planned on (--url / --context); a "
            "server restarted since has a new run_id: make a new plan",
        )
    db = server_db(conn, plan.stream)
    if plan.db is None or plan.db != db:
        made = "an unknown database" if plan.db is None else f"db {plan.db}"
        raise PlanRefused(f"this plan was made on {made}, not on db {db} of {here}",
                          hint=f"apply it on db {plan.db}, where it was planned (a URL "
                          f"ending in /{plan.db})" if plan.db is not None
                          else "make a new plan")  # fmt: skip
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
