"""The reclaim loop's policy when an audit line cannot be written (docs/reclaim.md,
"Audit lines that cannot be written").

Default, fail closed: an ERROR log line, ``recovery_audit_failures_total``, no further
change, and the loop ends with exit 6. ``--on-audit-failure continue``: an ERROR line and
the counter per failure, and the loop goes on. The audit path passes the pre-check and is
a directory by the time the line comes. (The ``pelctl reclaim --once`` process under a
file-size limit is in tests/cli/test_audit_failures.py.)
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pelctl.core import audit
from pelctl.demo import scenario as sc
from tests.integration.repair_support import HOUR, pel


@pytest.fixture
def swapped_log(tmp_path, monkeypatch) -> Path:
    """An audit path that passes the pre-check, then is a directory when the line comes."""
    path = tmp_path / "audit" / "audit.jsonl"
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(path))
    audit.ensure_writable()
    path.unlink()
    path.mkdir()
    return path


def two_streams(r) -> None:
    for stream in (b"s", b"t"):
        sc.add_entries(r, stream, 5)
        sc.create_group(r, stream, b"g")
        ids = sc.deliver(r, stream, b"g", b"dead", 5)
        sc.set_idle(r, stream, b"g", b"dead", ids, HOUR)


def test_the_loop_fails_closed_and_ends_with_exit_6(r, make_runner, swapped_log, caplog) -> None:
    from pelctl.base.errors import NotAudited
    from pelctl.reclaim.metrics import ReclaimMetrics

    two_streams(r)
    metrics = ReclaimMetrics()
    runner = make_runner(metrics=metrics, streams=(b"s", b"t"), once=False, interval_s=0.01)
    outcome: list[BaseException | int] = []

    def loop() -> None:
        try:
            outcome.append(runner.run_forever())
        except BaseException as err:  # noqa: BLE001
            outcome.append(err)

    with caplog.at_level("INFO", logger="pelctl.reclaim"):
        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        thread.join(30)
        still_running = thread.is_alive()
        runner.stop()
        thread.join(10)
    assert not still_running, "the loop went on mutating after its audit line failed"
    (err,) = outcome
    assert isinstance(err, NotAudited) and err.exit_code == 6, err
    assert "reclaim of s WAS applied (5 changed)" in err.message
    assert str(swapped_log) in err.message
    assert len(pel(r, b"s", b"g")) == 0  # the first stream's pass was done...
    assert len(pel(r, b"t", b"g")) == 5  # ...and nothing was changed after it
    failed = [rec for rec in caplog.records if rec.getMessage() == "audit-failed"]
    assert [rec.levelname for rec in failed] == ["ERROR"]
    assert failed[0].pelctl_fields["policy"] == "stop"
    assert metrics.text().count('recovery_audit_failures_total{group="g",stream="s"} 1.0') == 1


def test_the_loop_goes_on_when_told_to(r, make_runner, swapped_log, caplog) -> None:
    from pelctl.reclaim.metrics import ReclaimMetrics

    two_streams(r)
    metrics = ReclaimMetrics()
    runner = make_runner(metrics=metrics, streams=(b"s", b"t"), on_audit_failure="continue")
    with caplog.at_level("INFO", logger="pelctl.reclaim"):
        report = runner.run_pass()
    assert report.totals.requeued == 10 and not report.interrupted
    assert runner.audit_error is None and not runner.stopping
    failed = [rec for rec in caplog.records if rec.getMessage() == "audit-failed"]
    assert [(rec.levelname, rec.pelctl_fields["stream"]) for rec in failed] == [
        ("ERROR", b"s"),
        ("ERROR", b"t"),
    ]
    text = metrics.text()
    for stream in ("s", "t"):
        assert f'recovery_audit_failures_total{{group="g",stream="{stream}"}} 1.0' in text
