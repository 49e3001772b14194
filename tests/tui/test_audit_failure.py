"""The dashboard when the audit line of an applied action cannot be written (docs/safety.md,
"When the audit line cannot be written"):
the outcome says what was applied and that it was NOT audited; the notification says
"applied, NOT audited", never "failed"."""

from __future__ import annotations

from pelctl.tui.messages import ActionApplied, ActionFailed, ActionPlanned
from tests.integration.repair_support import S, incident, pel
from tests.tui.test_actions import confirm, open_group


def test_operations_report_applied_not_audited(r, redis_server, tmp_path, monkeypatch) -> None:
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui import operations
    from pelctl.tui.actions import ActionRequest
    from pelctl.tui.source import RedisSource

    stuck, _ = incident(r, dead=4)
    path = tmp_path / "audit" / "audit.jsonl"
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(path))
    settings = ConnectionSettings(url=redis_server.url)
    source = RedisSource(connect(settings), action_factory=lambda: connect(settings))
    try:
        request = ActionRequest(action="ack", stream=S, group=b"billing", ids=tuple(stuck))
        plan = operations.plan(source, request)  # the pre-check passes here
        path.unlink()
        path.mkdir()  # ...and the log cannot take the line when it comes
        outcome = source.apply(plan)
    finally:
        source.close()
    assert outcome.applied == 4 and outcome.failed == 0 and not outcome.ok
    assert outcome.not_audited is not None
    assert "ack WAS applied (4 changed) but NOT audited" in outcome.not_audited
    assert str(path) in outcome.not_audited
    assert not set(stuck) & set(pel(r))


async def test_the_notification_says_applied_not_audited(
    demo, make_app, recorder, r, tmp_path, monkeypatch
):
    path = tmp_path / "audit" / "audit.jsonl"
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(path))
    app = make_app(stream=b"orders", group=b"billing")
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        screen = await open_group(app, pilot, recorder)
        target = screen.entries.cursor_key
        before = r.xpending("orders", "billing")["pending"]
        await pilot.press("a")
        await recorder.wait_for(ActionPlanned, timeout=15)  # the pre-check passed
        path.unlink()
        path.mkdir()
        await confirm(pilot, recorder)
        applied = await recorder.wait_for(ActionApplied, timeout=15)
        await pilot.pause()
        assert applied.outcome.applied == 1 and applied.outcome.not_audited
        assert not recorder.of(ActionFailed)
        (note,) = [n for n in app._notifications if "NOT audited" in n.title]
        assert note.severity == "error" and "failed" not in note.title
        assert "WAS applied (1 changed)" in note.message and str(path) in note.message
    assert r.xpending("orders", "billing")["pending"] == before - 1
    rows = r.xpending_range("orders", "billing", "-", "+", 1000)
    assert target.encode() not in {row["message_id"] for row in rows}
