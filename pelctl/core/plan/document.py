"""A plan as the JSON document of its file (format ``pelctl-plan``, version 3; version 2
still read): :func:`to_json` writes it (also the items of dry runs and the ``params`` of
audit lines), :func:`from_json` reads it back with every field validated: only the repairs
that ``--plan-out`` saves, stream ids, consumer names, the outcomes each repair can plan.
The seal is checked before (:mod:`pelctl.core.plan.sealing`, :func:`pelctl.core.plan.file.load`)."""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

from pelctl.base.binary import escape
from pelctl.core.mutations.declaration import Plan, get
from pelctl.core.mutations.model import ConsumerItem, Item, Options, PlanItem, Targets, skip
from pelctl.core.mutations.outcomes import APPLIED_OUTCOMES, FAILED_OUTCOMES
from pelctl.core.plan.fields import (
    escaped,
    read_bool,
    read_int,
    read_list,
    read_name,
    read_note,
    read_opt_int,
    read_opt_str,
    read_stream_id,
    read_table,
)

FORMAT = "pelctl-plan"
# 1: unsealed plans (pelctl before the seal), refused. 2: items with "owner" and "action"
# (the planner's verbs). 3: the JSON vocabulary of every output (docs/formats.md): items with
# "consumer" and "outcome" (what apply will report), targets "id_count", options
# "consumer_min_idle_ms". Version 2 files are still read.
VERSION = 3
READABLE = (2, 3)
# The caps of a plan file: a plan is for a reviewed repair, not a whole 10M-entry PEL.
MAX_ITEMS = 50_000
# The repairs a plan file may hold, and the item actions of each one's version 2 items (the
# planner's verbs before items spoke the outcome; dlq replay/purge are not saved as plan
# files). A version 3 item's outcome is checked against the same sets (_ACTION_OF), so both
# versions refuse the same items with the same words.
ITEM_ACTIONS: dict[str, frozenset[str]] = {
    "claim": frozenset({"claim", "skip", "refuse"}),
    "ack": frozenset({"ack", "skip", "refuse"}),
    "requeue": frozenset({"requeue", "dlq", "ack-ghost", "skip", "refuse"}),
    "dlq-move": frozenset({"dlq", "ack-ghost", "skip", "refuse"}),
    "consumers-prune": frozenset({"delete", "reassign+delete", "refuse", "skip"}),
    "ghosts-fix": frozenset({"ack-ghost", "skip", "refuse"}),
    # no items: the plan is a bound ("trim": what may go), planned again when applied
    "trim": frozenset(),
}
_TOKEN = re.compile(r"[a-z][a-z0-9-]{0,39}")  # an outcome name (fullmatch)
# Version 3 items: the planner's action behind each outcome a plan file may hold (a skip is
# written as its reason; a prune's "deleted" is "reassign+delete" for a consumer holding
# entries, since only --reassign-to lets one be deleted).
_ENTRY_ITEM_KEYS = frozenset({"id", "consumer", "idle_ms", "deliveries", "outcome", "note"})
_CONSUMER_ITEM_KEYS = frozenset({"consumer", "idle_ms", "pending", "outcome", "note"})
_ACTION_OF = {
    "requeued": "requeue",
    "dlq": "dlq",
    "claimed": "claim",
    "acked": "ack",
    "ghost": "ack-ghost",
    "deleted": "delete",
    "refused": "refuse",
}
# A version 2 item's action, as the outcome a plan item carries (a skip: its reason).
_OUTCOME_OF_V2 = {action: outcome for outcome, action in _ACTION_OF.items()} | {
    "reassign+delete": "deleted"
}


def item_to_json(item: Item) -> dict[str, Any]:
    """One plan item as plan files and dry runs write it: an entry (:class:`PlanItem`)
    ``{"id", "consumer", "idle_ms", "deliveries", "outcome", "note"}``, or for ``consumers
    prune`` a consumer (:class:`ConsumerItem`) ``{"consumer", "idle_ms", "pending", "outcome",
    "note"}``; ``outcome`` is what applying it will report (the item's own ``outcome``)."""
    if isinstance(item, ConsumerItem):
        return {
            "consumer": escape(item.name),
            "idle_ms": item.inactive_ms,
            "pending": item.pending,
            "outcome": item.outcome,
            "note": item.note,
        }
    if not isinstance(item, PlanItem):
        raise TypeError(f"a plan holds entries and consumers, not {type(item).__name__}")
    return {
        "id": escape(item.id),
        "consumer": escape(item.owner),
        "idle_ms": item.idle_ms,
        "deliveries": item.deliveries,
        "outcome": item.outcome,
        "note": item.note,
    }


def params_json(plan: Plan[Item]) -> dict[str, Any]:
    """The plan's targets and options (what the audit log records as ``params``)."""
    data = to_json(plan, items=False)
    return {"targets": data["targets"], "options": data["options"]}


def to_json(plan: Plan[Item], *, items: bool = True) -> dict[str, Any]:
    t, o = plan.targets, plan.options
    extra: dict[str, Any] = {}
    if plan.action == "trim":
        # What the trim was asked and planned: applied, it is planned again and never goes
        # past this bound (pelctl.core.repairs.trim).
        extra["trim"] = plan.mutation.audit_params(plan)
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
            "consumer": escaped(t.consumer),
            "min_idle_ms": t.min_idle_ms,
            "min_deliveries": t.min_deliveries,
            "limit": t.limit,
            "all": t.every,
            "below_deliveries": t.below_deliveries,
        },
        "options": {
            "to": escaped(o.to),
            "dlq": escaped(o.dlq),
            "reason": o.reason,
            "lock_key": o.lock_key,
            "max_retries": o.max_retries,
            "field_prefix": o.field_prefix,
            "no_lineage": o.no_lineage,
            "consumer_min_idle_ms": o.inactive_ms,
            "reassign_to": escaped(o.reassign_to),
            "full": o.full,
            "assume_dead": o.assume_dead,
            "create_consumer": o.create_consumer,
        },
        "count": plan.count,
        "items": [item_to_json(i) for i in plan.items] if items else [],
        "missing": [escape(i) for i in plan.missing],
        "notes": list(plan.notes),
        **extra,
    }


def from_json(data: Any) -> Plan[Item]:
    """A plan from its JSON, every field validated (raises ValueError, KeyError, TypeError
    or UsageError). The seal is checked by :func:`load`, before this."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f'not a pelctl plan (no "format": "{FORMAT}")')
    version = data.get("version")
    if version not in READABLE:
        raise ValueError(
            f"unsupported plan version {version!r:.20} (this pelctl reads "
            f"versions {', '.join(map(str, READABLE))})"
        )
    action = data["action"]
    if not isinstance(action, str) or action not in ITEM_ACTIONS:
        raise ValueError(
            f"a plan file cannot hold {str(action)[:40]!r} (only {', '.join(ITEM_ACTIONS)})"
        )
    mutation = get(action)
    t = read_table(data, "targets")
    o = read_table(data, "options")
    raw_items = data["items"]
    if not isinstance(raw_items, list):
        raise ValueError('"items" must be a list')
    if len(raw_items) > MAX_ITEMS:
        raise ValueError(f"{len(raw_items):,} items, more than the {MAX_ITEMS:,} a plan may hold")
    allowed = ITEM_ACTIONS[action]
    consumers = mutation.subject == "consumer"
    read_item = _item if version == 2 else _item_v3
    items = [read_item(raw, allowed, consumers) for raw in raw_items]
    seen = Counter(i.key for i in items)
    twice = [k for k, n in seen.items() if n > 1]
    if twice:
        raise ValueError(f"item {escape(twice[0])} is listed {seen[twice[0]]} times")
    missing = data.get("missing") or []
    if not isinstance(missing, list) or len(missing) > MAX_ITEMS:
        raise ValueError('"missing" must be a list of stream ids')
    options = Options(
        to=read_name(o, "to"),
        dlq=read_name(o, "dlq"),
        reason=read_opt_str(o, "reason"),
        lock_key=read_opt_str(o, "lock_key"),
        max_retries=read_opt_int(o, "max_retries"),
        field_prefix=read_opt_str(o, "field_prefix") or "_",
        no_lineage=read_bool(o, "no_lineage"),  # absent (older plans): lineage on
        inactive_ms=read_opt_int(o, "inactive_ms" if version == 2 else "consumer_min_idle_ms"),
        reassign_to=read_name(o, "reassign_to"),
        full=read_bool(o, "full"),
        assume_dead=read_bool(o, "assume_dead"),
        create_consumer=read_bool(o, "create_consumer"),
    )
    needed = mutation.missing_need(options)
    if needed is not None:
        raise ValueError(f'{action} needs options "{needed}"')
    if options.reassign_to is None and any(
        isinstance(i, ConsumerItem) and i.reassigns for i in items
    ):
        raise ValueError("a consumer holding entries is deleted only with --reassign-to")
    if options.lock_key is not None:
        from pelctl.core.locks import check_lock_pattern

        check_lock_pattern(options.lock_key)
    plan: Plan[Item] = Plan(
        action=action,
        stream=read_name(data, "stream", required=True) or b"",
        group=read_name(data, "group", required=action != "trim") or b"",  # a trim: the stream
        items=tuple(items),
        targets=Targets(
            consumer=read_name(t, "consumer"),
            min_idle_ms=read_opt_int(t, "min_idle_ms"),
            min_deliveries=read_opt_int(t, "min_deliveries"),
            limit=read_opt_int(t, "limit"),
            every=read_bool(t, "all"),
            below_deliveries=read_opt_int(t, "below_deliveries"),
        ),
        options=options,
        missing=tuple(read_stream_id(i) for i in missing),
        server=read_opt_str(data, "server") or "",
        server_id=read_opt_str(data, "server_id") or "",
        db=read_opt_int(data, "db"),
        stream_added=read_opt_int(data, "stream_entries_added"),
        created_ms=read_opt_int(data, "created_ms") or 0,
        notes=tuple(read_note(n) for n in read_list(data, "notes")),
    )
    if action == "trim":
        plan = _trim_plan(plan, read_table(data, "trim"))
    count = data.get("count")
    if count is not None and count != plan.count:
        raise ValueError(f'"count" is {str(count)[:20]} but {plan.count:,} items will act')
    return plan


def _trim_plan(plan: Plan[Item], t: dict[str, Any]) -> Plan[Item]:
    """A trim's plan from its ``trim`` table: its options, with ``--minid`` lowered to the
    planned bound (applying it never goes past what was reviewed)."""
    from dataclasses import fields

    from pelctl.core.trim import TrimOptions, TrimPlan

    minid = t.get("minid")
    bound = t.get("bound")
    ids = [read_stream_id(i) for i in (minid, bound) if i is not None]
    ceiling = min(ids, key=lambda i: tuple(int(p) for p in i.split(b"-"))) if ids else None
    keep = read_opt_int(t, "maxlen")
    step = read_opt_int(t, "step")
    max_ms = t.get("max_server_ms")
    if not isinstance(max_ms, (int, float)) or isinstance(max_ms, bool) or max_ms <= 0:
        raise ValueError('"trim.max_server_ms" must be a positive number')
    if ceiling is None and keep is None:
        raise ValueError("a trim plan needs a bound, --minid or --maxlen")
    options = TrimOptions(keep=keep, minid=ceiling, step=step, max_server_ms=float(max_ms))
    values = {f.name: getattr(plan, f.name) for f in fields(Plan)}
    values["options"] = options
    return TrimPlan(**values, planned=read_int(t, "planned_entries"))


def _item_v3(raw: Any, allowed: frozenset[str], consumers: bool) -> PlanItem | ConsumerItem:
    """A version 3 item: the outcome it was planned to have (checked against what the
    repair's planner makes)."""
    if not isinstance(raw, dict):
        raise ValueError("every item must be an object")
    keys = _CONSUMER_ITEM_KEYS if consumers else _ENTRY_ITEM_KEYS
    unknown = sorted(set(raw) - keys)
    if unknown:
        raise ValueError(
            f"item key {unknown[0][:40]!r} is not one a plan item has ({', '.join(sorted(keys))})"
        )
    if "outcome" not in raw:
        raise ValueError('a version 3 plan item has an "outcome"')
    outcome = raw["outcome"]
    if not isinstance(outcome, str) or not _TOKEN.fullmatch(outcome):
        raise ValueError(f"item outcome {str(outcome)[:40]!r} is not an outcome name")
    note = read_note(raw.get("note") or "")
    if consumers:  # consumers prune: the item is a consumer, by name
        name = read_name(raw, "consumer", required=True) or b""
        count = read_int(raw, "pending")
    else:
        entry_id = read_stream_id(raw["id"])
        owner = read_name(raw, "consumer", required=True) or b""
        count = read_int(raw, "deliveries")
    if _planned_action(outcome, note, count) not in allowed:
        raise ValueError(f"item outcome {outcome!r} is not one this repair makes")
    idle = read_int(raw, "idle_ms")
    if consumers:
        return ConsumerItem(name, inactive_ms=idle, pending=count, outcome=outcome, note=note)
    return PlanItem(entry_id, owner, idle_ms=idle, deliveries=count, outcome=outcome, note=note)


def _planned_action(outcome: str, note: str, count: int) -> str:
    """The planner's action behind a version 3 item's outcome (``count``: the entry's
    deliveries, the consumer's pending entries), as version 2 named it."""
    if outcome in _ACTION_OF:
        action = _ACTION_OF[outcome]
        return "reassign+delete" if action == "delete" and count else action
    if outcome in APPLIED_OUTCOMES or outcome in FAILED_OUTCOMES:
        raise ValueError(f"item outcome {outcome!r} is not one a plan makes")
    if outcome != skip(note):  # a skip, written as its reason
        raise ValueError(f"item outcome {outcome!r} does not match its note {note[:40]!r}")
    return "skip"


def _item(raw: Any, allowed: frozenset[str], consumers: bool) -> PlanItem | ConsumerItem:
    """A version 2 item (``owner``, ``action``), as the outcome its action had."""
    if not isinstance(raw, dict):
        raise ValueError("every item must be an object")
    if "action" not in raw:
        raise ValueError(
            'a version 2 plan item has an "action" (version 3 items have an "outcome")'
        )
    action = raw["action"]
    if action not in allowed:
        raise ValueError(
            f"item action {str(action)[:40]!r} is not one this repair makes "
            f"({', '.join(sorted(allowed))})"
        )
    note = read_note(raw.get("note") or "")
    outcome = skip(note) if action == "skip" else _OUTCOME_OF_V2[action]
    if consumers:  # consumers prune: the item is a consumer, by name ("id" and "owner")
        name = read_name(raw, "id", required=True) or b""
        if read_name(raw, "owner", required=True) != name:
            raise ValueError(f"item {escape(name)}: a consumer's owner is its own name")
        inactive, pending = read_int(raw, "idle_ms"), read_int(raw, "deliveries")
        return ConsumerItem(name, inactive, pending, outcome, note)
    entry_id, owner = read_stream_id(raw["id"]), read_name(raw, "owner", required=True) or b""
    idle, deliveries = read_int(raw, "idle_ms"), read_int(raw, "deliveries")
    return PlanItem(entry_id, owner, idle, deliveries, outcome, note)
