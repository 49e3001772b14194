"""Every operator action through the confirmation modal, against the demo on a real server:
the app's messages say what happened, and the server state afterwards proves it. A cancel,
an empty plan and every read-only refusal leave the whole server as it was (every key of
every database: values, groups, consumers, PEL owners and delivery counts, seen-times)."""

from __future__ import annotations

import json
import os

from pelctl.tui.messages import (
    ActionApplied,
    ActionCancelled,
    ActionPlanned,
    ActionRefused,
    Refreshed,
)
from pelctl.tui.screens.confirm import ConfirmScreen
from pelctl.tui.screens.dlq import DlqScreen
from pelctl.tui.screens.group import GroupScreen
from pelctl.tui.screens.prompt import PromptScreen
from tests.support.state import assert_unchanged, snapshot
from tests.tui.conftest import settle


def pending_of(r, consumer: bytes, stream: str = "orders", group: str = "billing") -> set[bytes]:
    rows = r.xpending_range(stream, group, "-", "+", 100_000, consumername=consumer)
    return {row["message_id"] for row in rows}


def audit_lines() -> list[dict]:
    path = os.path.join(os.environ["XDG_STATE_HOME"], "pelctl", "audit.jsonl")
    with open(path) as fh:
        return [json.loads(line) for line in fh]


async def open_group(app, pilot, recorder):
    await settle(pilot, GroupScreen)
    await recorder.wait_for(Refreshed, view="group")
    await pilot.pause()
    return app.screen


async def confirm(pilot, recorder, key: str = "y", after: int = 0):
    """Wait for the plan number ``after`` (0: the first), then answer the modal with ``key``."""
    planned = await recorder.wait_for(ActionPlanned, timeout=15, after=after)
    await settle(pilot, ConfirmScreen)
    await pilot.press(key)
    return planned.plan


async def test_requeue_marked_entries_through_the_modal(demo, make_app, recorder, r):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        first, second = (
            screen.entries.coordinate_to_cell_key((i, 0)).row_key.value for i in range(2)
        )
        await pilot.press("space", "space", "r")  # mark two rows, requeue them
        plan = await confirm(pilot, recorder)
        assert plan.request.ids == tuple(sorted((first.encode(), second.encode())))
        assert plan.total == 2 and plan.rows[0][4] == "requeued"
        # the question names the consumer and the server (docs/safety.md)
        assert plan.title == f"requeue 2 entries of orders/billing held by billing-2 on {demo.url}?"
        # the lineage the copy carries (docs/formats.md "Lineage fields"), all three
        what = dict(plan.summary)["Action"]
        assert "_retry_count +1, _prior_deliveries, _original_id" in what, what
        applied = await recorder.wait_for(ActionApplied, timeout=15)
        assert applied.outcome.applied == 2 and applied.outcome.ok
        await recorder.wait_for(Refreshed, view="group", after=1)
        await pilot.pause()
        assert screen.entries.marked == set()
        assert first not in screen.entries.keyed_rows

    still = pending_of(r, b"billing-2")
    assert first.encode() not in still and second.encode() not in still
    copies = [f for _id, f in r.xrevrange("orders", count=5) if b"_original_id" in f]
    assert {c[b"_original_id"] for c in copies} == {first.encode(), second.encode()}
    assert all(c[b"_retry_count"] == b"1" for c in copies)
    assert all(c[b"_prior_deliveries"] == b"1" for c in copies)  # delivered once each
    line = audit_lines()[-1]
    assert line["surface"] == "tui" and line["action"] == "requeue"
    assert sorted(line["ids"]) == sorted([first, second])


async def test_claim_every_entry_matching_the_filter(demo, make_app, recorder, r):
    from pelctl.core.models import PendingFilter

    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        screen.set_filters(PendingFilter(consumer=b"billing-3"))
        await recorder.refreshed("group", lambda d: d.aggregate.filters.consumer == b"billing-3")
        await pilot.pause()
        await pilot.press("c")
        await settle(pilot, PromptScreen)
        app.screen.query_one("#value").value = "billing-1"
        await pilot.press("enter")
        plan = await confirm(pilot, recorder)
        assert plan.request.filters.consumer == b"billing-3" and not plan.request.ids
        assert plan.total == 3
        assert "every entry matching: consumer=billing-3" in dict(plan.summary)["Scope"]
        applied = await recorder.wait_for(ActionApplied, timeout=15)
        assert applied.outcome.applied == 3
    assert pending_of(r, b"billing-3") == set()
    assert len(pending_of(r, b"billing-1")) == 33 + 3


async def test_ack_cursor_row_cancel_and_two_connections(demo, make_app, recorder, r):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        before = r.xpending("orders", "billing")["pending"]
        whole = snapshot(demo)
        await pilot.press("a")
        await confirm(pilot, recorder, key="n")
        await recorder.wait_for(ActionCancelled)
        await settle(pilot, GroupScreen)
        assert_unchanged(whole, demo, what="a cancelled ack")

        screen.entries.move_cursor(row=3)
        target = screen.entries.cursor_key
        await pilot.press("a")
        plan = await confirm(pilot, recorder, after=1)
        assert plan.request.ids == (target.encode(),)
        await recorder.wait_for(ActionApplied, timeout=15)
        # one connection polls, another runs the actions (CLIENT SETNAME)
        names = {c["name"] for c in r.client_list()}
        assert any(n.endswith(":tui") for n in names)
        assert any(n.endswith(":tui-action") for n in names)
    assert r.xpending("orders", "billing")["pending"] == before - 1
    assert target.encode() not in pending_of(r, b"billing-2")


async def test_move_to_dlq_with_a_reason_then_replay_it(demo, make_app, recorder, r):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(160, 45), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        target = screen.entries.cursor_key
        await pilot.press("m")
        await settle(pilot, PromptScreen)
        app.screen.query_one("#value").value = "bad sku"
        await pilot.press("enter")
        plan = await confirm(pilot, recorder)
        assert dict(plan.summary)["Dead-letter stream"] == "orders:dlq"
        applied = await recorder.wait_for(ActionApplied, timeout=15)
        assert applied.outcome.applied == 1
        newest_id, newest = r.xrevrange("orders:dlq", count=1)[0]
        assert newest[b"_dlq_id"] == target.encode() and newest[b"_dlq_reason"] == b"bad sku"
        assert r.xlen("orders:dlq") == 15

        # D opens the DLQ view; replay the newest entry (the one just moved) back to orders
        await pilot.press("D")
        await settle(pilot, DlqScreen)
        await recorder.wait_for(Refreshed, view="dlq")
        await pilot.pause()
        dlq = app.screen
        assert dlq.table.cursor_key == newest_id.decode()
        await pilot.press("p")
        plan = await confirm(pilot, recorder, after=1)
        assert plan.request.ids == (newest_id,) and plan.total == 1
        applied = await recorder.wait_for(ActionApplied, after=1, timeout=15)
        assert applied.outcome.applied == 1
        await recorder.wait_for(Refreshed, view="dlq", after=1)
    assert r.xlen("orders:dlq") == 14
    replayed = [f for _id, f in r.xrevrange("orders", count=3) if b"_replayed_from" in f]
    assert replayed and replayed[0][b"_replayed_from"] == newest_id
    assert [line["action"] for line in audit_lines()][-2:] == ["dlq-move", "dlq-replay"]


async def test_prune_a_dead_consumer_reassigning_its_entries(demo, make_app, recorder, r):
    # The live workers name their connections after their consumer and billing-2 has no
    # such client: evidence that it is dead, which Redis 7.0's idle alone is not.
    peers = [demo.client(client_name=name) for name in ("billing-1", "billing-3")]
    for peer in peers:
        peer.ping()
    try:
        await _prune_billing_2(make_app, recorder, r)
    finally:
        for peer in peers:
            peer.close()
    names = {c["name"] for c in r.xinfo_consumers("orders", "billing")}
    assert b"billing-2" not in names


async def test_prune_refuses_a_consumer_whose_liveness_is_unknown(demo, make_app, recorder, r):
    """Redis 7.0 without a signal: the plan refuses billing-2 and says why (the CLI's
    --assume-dead is the way round, once its worker is known to be gone)."""
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        consumers = screen.consumers
        consumers.focus()
        consumers.move_cursor(row=consumers.get_row_index("billing-2"))
        await pilot.press("x")
        await settle(pilot, PromptScreen)
        app.screen.query_one("#value").value = "billing-1"
        await pilot.press("enter")
        planned = await recorder.wait_for(ActionPlanned, timeout=15)
        assert planned.plan.total == 0
        (row,) = planned.plan.rows
        assert row[0] == "billing-2" and row[3] == "refused"
        assert "liveness unknown (no-signal-below-7.2)" in row[4]
        assert dict(planned.plan.summary)["Assume dead"].startswith("no")
        assert "here: tick 'Assume its worker is dead' in the prune dialog (x) instead" in (
            planned.plan.warnings
        )
        await settle(pilot, ConfirmScreen)
        assert app.screen.query_one("#apply").disabled
        await pilot.press("escape")
        await recorder.wait_for(ActionCancelled)
    assert r.xinfo_consumers("orders", "billing")[1]["pending"] == 1_210


async def _prune_billing_2(make_app, recorder, r) -> None:
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        held = pending_of(r, b"billing-2")
        consumers = screen.consumers
        consumers.focus()
        consumers.move_cursor(row=consumers.get_row_index("billing-2"))
        await pilot.press("x")
        await settle(pilot, PromptScreen)
        app.screen.query_one("#value").value = "billing-1"
        await pilot.press("enter")
        plan = await confirm(pilot, recorder)
        assert plan.rows[0][0] == "billing-2" and plan.rows[0][3] == "deleted"
        applied = await recorder.wait_for(ActionApplied, timeout=15)
        assert applied.outcome.ok
        await recorder.wait_for(Refreshed, view="group", after=1)
        await pilot.pause()
        assert "billing-2" not in consumers.keyed_rows
    # nothing lost: every entry it held is now billing-1's (ghosts are dropped by XCLAIM)
    moved = pending_of(r, b"billing-1")
    assert len(held - moved) == 6  # the demo's six ghosts


async def test_prune_assume_dead_prunes_a_consumer_of_unknown_liveness(demo, make_app, recorder, r):
    """The CLI's --assume-dead, in the prune dialog: a checkbox, unticked unless the operator
    ticks it; ticked, billing-2 (Redis 7.0 without a signal: unknown) has its entries
    reassigned and is deleted, through the same core option, and the audit line says so."""
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        held = pending_of(r, b"billing-2")
        consumers = screen.consumers
        consumers.focus()
        consumers.move_cursor(row=consumers.get_row_index("billing-2"))
        await pilot.press("x")
        await settle(pilot, PromptScreen)
        prompt = app.screen
        assert prompt.query_one("#choice").value is False and not prompt.checked
        said = " ".join(str(label.render()) for label in prompt.query("Label"))
        assert "Its verdict now: unknown (no-signal-below-7.2)" in said
        prompt.query_one("#value").value = "billing-1"
        await pilot.press("tab", "space")  # to the box, tick it
        assert prompt.checked
        await pilot.click("#ok")
        plan = await confirm(pilot, recorder)
        assert plan.request.assume_dead and plan.request.to_consumer == b"billing-1"
        assert dict(plan.summary)["Assume dead"].startswith("yes")
        assert plan.rows[0][0] == "billing-2" and plan.rows[0][3] == "deleted"
        applied = await recorder.wait_for(ActionApplied, timeout=15)
        assert applied.outcome.ok
        await recorder.wait_for(Refreshed, view="group", after=1)
    assert b"billing-2" not in {c["name"] for c in r.xinfo_consumers("orders", "billing")}
    moved = pending_of(r, b"billing-1")
    assert len(held - moved) == 6  # the demo's six ghosts, dropped by XCLAIM; nothing else
    line = audit_lines()[-1]
    assert line["surface"] == "tui" and line["action"] == "consumers-prune"
    assert line["params"]["options"]["assume_dead"] is True


async def test_prune_refuses_a_live_consumer(demo, make_app, recorder, r):
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        whole = snapshot(demo)
        consumers = screen.consumers
        consumers.focus()
        consumers.move_cursor(row=consumers.get_row_index("billing-1"))
        await pilot.press("x")
        await settle(pilot, PromptScreen)
        app.screen.query_one("#value").value = "billing-3"
        await pilot.press("enter")
        planned = await recorder.wait_for(ActionPlanned, timeout=15)
        assert planned.plan.total == 0  # active: below the dead-suspect threshold
        await settle(pilot, ConfirmScreen)
        assert app.screen.query_one("#apply").disabled
        await pilot.press("y")  # does nothing on an empty plan
        await pilot.press("escape")
        await recorder.wait_for(ActionCancelled)
        await settle(pilot, GroupScreen)
    assert b"billing-1" in {c["name"] for c in r.xinfo_consumers("orders", "billing")}
    assert_unchanged(whole, demo, what="an empty prune plan, cancelled")


async def test_read_only_hides_and_refuses_every_action(demo, make_app, recorder, r):
    from pelctl.tui.actions import ActionRequest

    app = make_app(read_only=True, stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        keys = set(screen.active_bindings)
        assert not {"c", "r", "a", "m", "x"} & keys
        assert {"f", "escape", "d", "D"} <= keys
        whole = snapshot(demo)
        await pilot.press("r", "a", "m", "c", "x")
        await pilot.pause()
        assert isinstance(app.screen, GroupScreen) and recorder.count(ActionPlanned) == 0
        # a stale palette entry or a script cannot get through either
        screen.run_operator_action(ActionRequest("ack", b"orders", b"billing", ids=(b"1-0",)))
        refused = await recorder.wait_for(ActionRefused)
        assert refused.action == "ack" and "read-only" in refused.reason
        assert "READ-ONLY" in str(screen.status_bar.render())
        # the data source refuses on its own as well
        import pytest

        from pelctl.base.errors import ReadOnlyRefused

        with pytest.raises(ReadOnlyRefused):
            app.source.plan(ActionRequest("ack", b"orders", b"billing", ids=(b"1-0",)))
        await pilot.press("D")
        await settle(pilot, DlqScreen)
        assert "p" not in app.screen.active_bindings
        # ... nor on the DLQ view
        replay = ActionRequest("dlq_replay", b"orders", dlq=b"orders:dlq", ids=(b"1-0",))
        app.screen.run_operator_action(replay)
        await recorder.wait_for(ActionRefused, where=lambda m: m.action == "dlq_replay")
        await settle(pilot, DlqScreen)
    assert_unchanged(whole, demo, what="read-only: keys, a scripted action, the data source")
