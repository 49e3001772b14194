"""pelctl/render/trim.py: a trim's plan and result to text, rows and JSON (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.models import UnreadLoss
from pelctl.core.repairs.trim import TrimResult
from pelctl.core.trim import GroupBound, SafeTrim, StreamFacts, TrimOptions, TrimPlan
from pelctl.render import trim as tr
from pelctl.render.protocol import Blank, Line, Message, Note
from tests.unit.render_text import render

FACTS = StreamFacts(1000, b"1700000000000-0", b"1700000000999-0", b"1700000000999-0", 1000, b"0-0")
FAST = GroupBound(
    group=b"fast",
    last_delivered_id=b"1700000000999-0",
    pending=50,
    entries_read=1000,
    lag=0,
    oldest_pending=b"1700000000400-0",
    oldest_consumer=b"fast-1",
    oldest_idle_ms=60_000,
    ghosts_below=False,
    bound=b"1700000000400-0",
    reason="pending",
    readable=0,
    trimmed_unread=None,
)
SLOW = GroupBound(
    group=b"slow\x1b[31m",
    last_delivered_id=b"1700000000099-0",
    pending=0,
    entries_read=100,
    lag=900,
    oldest_pending=None,
    oldest_consumer=None,
    oldest_idle_ms=None,
    ghosts_below=False,
    bound=b"1700000000100-0",
    reason="undelivered",
    readable=900,
    trimmed_unread=None,
)
SAFE = SafeTrim(
    stream=b"orders",
    facts=FACTS,
    groups=(FAST, SLOW),
    bound=b"1700000000100-0",
    reason="undelivered",
    bounded_by=SLOW.group,
    keep=None,
    minid=None,
    below=100,
    entries=100,
    exact=True,
    bytes=5_600,
    memory=56_000,
)
PLAN = TrimPlan(
    "trim",
    b"orders",
    b"",
    (),
    options=TrimOptions(),
    server="redis://127.0.0.1:6379/0",
    notes=("a note",),
    trim=SAFE,
    planned=100,
)
RESULT = TrimResult(
    action="trim",
    stream=b"orders",
    group=b"",
    dry_run=False,
    matched=100,
    applied=100,
    skipped=0,
    failed=(),
    extra=(("trimmed", 100),),
    headline="trimmed 100 entries from stream orders on redis://127.0.0.1:6379/0",
    steps=2,
    max_step_ms=0.42,
    policy="ACKED",
    bound=b"1700000000100-0",
    first_before=b"1700000000000-0",
    first_after=b"1700000000100-0",
    length_before=1000,
    length_after=900,
    bytes_freed=5_600,
    stopped_by="undelivered",
    stopped_group=SLOW.group,
    stopped_at=b"1700000000100-0",
)


def test_where_each_group_holds_the_trim() -> None:
    table = tr.groups_table(SAFE)
    assert render("plain", table) == (
        "# Where each group holds the trim\n"
        "GROUP           PENDING    LAG    LOST  LAST DELIVERED    NEEDS FROM       BECAUSE\n"
        "fast                 50      0       -  1700000000999-0   1700000000400-0  oldest pending (idle 1m00s)\n"  # noqa: E501
        "slow\\x1b[31m          0    900       -  1700000000099-0   1700000000100-0  next undelivered\n"  # noqa: E501
    )
    assert table.row_styles == [None, "bold"]  # the group that holds it
    assert tr.GROUPS.record(FAST) == {
        "group": "fast",
        "pending": 50,
        "lag": 0,
        "readable": 0,
        "trimmed_unread": None,
        "last_delivered_id": "1700000000999-0",
        "oldest_pending": "1700000000400-0",
        "bound": "1700000000400-0",
        "bound_kind": "pending",
        "ghosts_below": False,
    }
    lost = replace(SLOW, trimmed_unread=UnreadLoss(400), readable=500)
    assert tr.GROUPS.row(lost)[2:4] == ("500", "400")
    assert tr.GROUPS.style(lost) == "red"


def test_the_dry_run() -> None:
    summary = tr.plan_summary(PLAN)
    assert summary == (
        "trim of orders on redis://127.0.0.1:6379/0: 100 of 1,000 entries (≈ 5.6 KB), every "
        "one read and acknowledged by all 2 groups; stops at group slow\\x1b[31m's next "
        "undelivered entry, 1700000000100-0"
    )
    view = list(tr.DryRunRenderer("plan p.json: ...").view(PLAN, 100))
    assert view == [
        Message("plan p.json: ..."),
        Message(f"dry run, nothing changed: {summary}"),
        Note("note: a note"),
        Blank(),
        tr.groups_table(SAFE),
    ]
    doc = tr.DryRunRenderer().document(PLAN)
    assert {k: doc[k] for k in ("action", "dry_run", "matched", "applied", "outcomes")} == {
        "action": "trim",
        "dry_run": True,
        "matched": 100,
        "applied": 0,
        "outcomes": {"trimmed": 100},
    }
    assert (doc["bound"], doc["bound_group"], doc["bound_kind"]) == (
        "1700000000100-0",
        "slow\\x1b[31m",
        "undelivered",
    )
    assert doc["groups"] == [tr.group_json(FAST), tr.group_json(SLOW)]
    assert tr.DryRunRenderer().records(PLAN) == doc["groups"]


def test_what_holds_it() -> None:
    nothing = replace(SAFE, entries=0, below=0)
    assert tr.what(nothing) == "nothing can go now (of 1,000 entries)"
    kept = replace(SAFE, keep=950, entries=50)
    assert tr.held(kept) == "--maxlen 950"
    assert tr.held(replace(SAFE, reason="minid", minid=b"5-0", bounded_by=None)) == "--minid 5-0"
    alone = replace(SAFE, groups=(), reason="no-groups", bound=None, bounded_by=None, keep=10)
    assert tr.what(replace(alone, entries=990, exact=False, bytes=None)) == (
        "about 990 of 1,000 entries"
    )


def test_saved() -> None:
    renderer = tr.SavedRenderer()
    assert renderer.document((PLAN, "p.json"))["plan_file"] == "p.json"
    assert list(renderer.view((PLAN, "p.json"), 100)) == [
        Line(f"plan saved to p.json: {tr.plan_summary(PLAN)}"),
        Note("review it, then run: pelctl apply p.json"),
    ]


def test_the_result() -> None:
    assert tr.result_summary(RESULT) == (
        "trimmed 100 entries from stream orders on redis://127.0.0.1:6379/0\n"
        "  length 1,000 → 900, first id 1700000000000-0 → 1700000000100-0; ≈ 5.6 KB freed\n"
        "  2 steps (longest 0.4 ms), XTRIM MINID with ACKED; stopped at group "
        "slow\\x1b[31m's next undelivered entry"
    )
    doc = tr.AppliedRenderer().document(RESULT)
    assert doc == {
        "action": "trim",
        "stream": "orders",
        "dry_run": False,
        "matched": 100,
        "applied": 100,
        "skipped": 0,
        "failed": [],
        "failed_count": 0,
        "outcomes": {"trimmed": 100},
        "interrupted": False,
        "bytes": 5_600,
        "length": 900,
        "length_before": 1000,
        "first_id": "1700000000100-0",
        "first_id_before": "1700000000000-0",
        "bound": "1700000000100-0",
        "stopped_by": "undelivered",
        "stopped_group": "slow\\x1b[31m",
        "stopped_at": "1700000000100-0",
        "steps": 2,
        "max_step_ms": 0.42,
        "policy": "ACKED",
        "notes": [],
    }
    (record,) = tr.AppliedRenderer().records(RESULT)
    assert "notes" not in record and "outcomes" not in record and record["applied"] == 100
    stopped = replace(RESULT, interrupted=True, notes=("n",), policy="")
    view = list(tr.AppliedRenderer().view(stopped, 100))
    assert view[1:] == [Note("note: n")]
    assert "XTRIM MINID;" in tr.result_summary(stopped)
    assert tr.result_summary(stopped).endswith(
        "interrupted between two steps: every entry removed is counted above"
    )
    keep_only = replace(RESULT, bound=None, stopped_at=None, stopped_by="empty", policy="")
    assert "XTRIM MAXLEN" in tr.result_summary(keep_only)
