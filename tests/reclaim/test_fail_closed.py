"""The sidecar fails closed on names and speaks little.

- a stream or group that does not exist at start ends the loop with exit 3 and one error
  line whose hint names the groups that exist, unless ``--wait-for-group``: then it waits,
  logged once at INFO and again every summary period, and heals what exists meanwhile;
- a stream or group that disappears while the loop runs is a WARNING once, not every pass;
- a pass that changed nothing logs at DEBUG; a ``summary`` line at INFO every period.
"""

from __future__ import annotations

import json
import logging
import signal

from pelctl.demo import scenario as sc
from tests.reclaim.conftest import HOUR, build_pel, copies, pending_ids

LOOP = ("-g", "g", "--idle", "30s", "--interval", "20ms")


def _lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def test_a_typo_in_the_group_ends_the_loop_with_exit_3_and_names_the_groups(
    r, redis_server, spawn
) -> None:
    build_pel(r, 5, idle={1: HOUR})
    sc.create_group(r, b"s", b"settlements")
    p = spawn(redis_server.url, "s", "-g", "settlement", "--idle", "30s", "--interval", "20ms")
    assert p.proc.wait(20) == 3  # on main it ran forever, a warning per pass
    p._reader.join(5)
    stderr = "".join(p.raw)
    assert _lines(stderr, "error:") == ["error: group settlement not found on stream s"]
    (hint,) = _lines(stderr, "hint:")
    assert "groups on s: g, settlements" in hint and "--wait-for-group" in hint
    (fatal,) = p.events("fatal")
    assert fatal["level"] == "error" and fatal["hint"] == hint.removeprefix("hint: ")
    assert not p.events("pass") and not p.events("stream-skipped")
    assert len(pending_ids(r)) == 5 and not copies(r)  # nothing was touched


def test_a_missing_stream_or_a_key_of_another_type_is_refused_too(r, cli) -> None:
    build_pel(r, 5, idle={1: HOUR})
    r.set("plain", "x")
    res = cli("reclaim", "s", "orderz", *LOOP, "--max-passes", "3")
    assert res.exit_code == 3
    assert _lines(res.stderr, "error:") == ["error: stream orderz not found"]
    assert "pelctl streams" in _lines(res.stderr, "hint:")[0]
    assert pending_ids(r) and not copies(r)  # refused before any pass: s was not healed either
    # --once too: one error line, no summary table
    res = cli("reclaim", "s", "-g", "nope", "--idle", "30s", "--once")
    assert res.exit_code == 3 and res.stdout == ""
    assert _lines(res.stderr, "error:") == ["error: group nope not found on stream s"]
    assert "groups on s: g;" in res.stderr
    # waiting does not turn a string into a stream
    res = cli("reclaim", "plain", *LOOP, "--wait-for-group", "--max-passes", "3")
    assert res.exit_code == 3 and "not a stream" in res.stderr


def test_wait_for_group_waits_quietly_then_heals(r, redis_server, spawn) -> None:
    sc.add_entries(r, b"s", 10)  # the workers have not created their group yet
    p = spawn(redis_server.url, "s", *LOOP, "--wait-for-group", "--summary-every", "1h", "-v")
    p.wait_for(lambda: len(p.events("stream-skipped")) >= 5, what="five passes while waiting")
    (waiting,) = p.events("waiting")  # once, however many passes
    assert waiting["level"] == "info" and waiting["stream"] == "s" and waiting["group"] == "g"
    assert "group g not found on stream s" in waiting["error"]
    assert {e["level"] for e in p.events("stream-skipped")} == {"debug"}
    assert p.proc.poll() is None

    sc.create_group(r, b"s", b"g")
    ids = sc.deliver(r, b"s", b"g", b"c1", 10)
    sc.set_idle(r, b"s", b"g", b"c1", ids[:3], HOUR)
    p.wait_for(lambda: any(e.get("requeued") == 3 for e in p.events("pass")), what="healing")
    (found,) = p.events("target-found")
    assert found["level"] == "info" and found["missing_s"] > 0
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(10) == 0
    assert len(copies(r)) == 3


def test_waiting_is_said_again_every_summary_period(r, redis_server, spawn) -> None:
    build_pel(r, 5)
    p = spawn(redis_server.url, "s", "other", *LOOP, "--wait", "--summary-every", "200ms")
    p.wait_for(lambda: len(p.events("waiting")) >= 3, what="reminders")
    first, second = p.events("waiting")[:2]
    assert "waited_s" not in first and second["waited_s"] >= 0.2
    assert first["error"] == "stream other not found"
    p.wait_for(lambda: p.events("summary"), what="a summary")
    summary = p.events("summary")[0]
    assert summary["level"] == "info" and summary["missing"] == ["other"]
    assert summary["passes"] >= 1 and summary["stream_count"] == 2
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(10) == 0


def test_once_with_wait_for_group_waits_then_makes_its_one_pass(r, redis_server, spawn) -> None:
    p = spawn(redis_server.url, "s", *LOOP, "--once", "--wait-for-group", "-o", "json")
    p.wait_for(lambda: p.events("waiting"), what="waiting")
    build_pel(r, 20, idle={4: HOUR, 5: HOUR})
    assert p.proc.wait(20) == 0
    assert json.loads(p.proc.stdout.read())["requeued"] == 2
    assert len(p.events("waiting")) == 1 and p.events("target-found")


def test_a_group_that_disappears_is_a_warning_once_not_every_pass(r, make_runner, caplog) -> None:
    build_pel(r, 10, idle={1: HOUR})
    runner = make_runner(once=False)
    with caplog.at_level(logging.DEBUG, logger="pelctl.reclaim"):
        runner.check_targets()
        assert runner.run_pass().totals.requeued == 1
        sc.raw(r).execute_command("XGROUP", "DESTROY", "s", "g")
        for _ in range(3):
            assert runner.run_pass().streams[0].error
        assert runner.missing == [b"s"]
        sc.create_group(r, b"s", b"g")
        ids = sc.deliver(r, b"s", b"g", b"c1", 5)
        sc.set_idle(r, b"s", b"g", b"c1", ids[:2], HOUR)
        assert runner.run_pass().totals.requeued == 2
    skipped = [rec.levelno for rec in caplog.records if rec.getMessage() == "stream-skipped"]
    assert skipped == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    found = [rec for rec in caplog.records if rec.getMessage() == "target-found"]
    assert len(found) == 1 and found[0].levelno == logging.INFO
    assert runner.missing == []


def test_quiet_passes_log_at_debug_and_a_summary_at_info(r, make_runner, caplog) -> None:
    """A slow consumer holds a lock on an idle entry: every pass skips it. On main each such
    pass was an INFO line; now only the pass that changed something is, plus a summary."""
    ids = build_pel(r, 50, idle={3: HOUR, 7: HOUR})
    r.set(b"lock:s:" + ids[7], b"worker-7")
    now = [0.0]
    runner = make_runner(
        once=False,
        interval_s=0.0,
        lock_key="lock:{stream}:{id}",
        runner_kwargs={"summary_every_s": 60.0, "max_passes": 6, "clock": lambda: now[0]},
    )
    run_pass = runner.run_pass

    def pass_of_40_seconds():  # the fake clock moves 40 s a pass
        report = run_pass()
        now[0] += 40.0
        return report

    runner.run_pass = pass_of_40_seconds
    with caplog.at_level(logging.DEBUG, logger="pelctl.reclaim"):
        assert runner.run_forever() == 0
    passes = [rec for rec in caplog.records if rec.getMessage() == "pass"]
    assert [rec.levelno for rec in passes] == [logging.INFO] + [logging.DEBUG] * 5
    summaries = [rec.pelctl_fields for rec in caplog.records if rec.getMessage() == "summary"]
    assert [s["passes"] for s in summaries] == [2, 2, 2]  # every 60 s of the fake clock
    assert all(
        rec.levelno == logging.INFO for rec in caplog.records if rec.getMessage() == "summary"
    )
    assert sum(s["requeued"] for s in summaries) == 1
    assert sum(s["skipped_alive"] for s in summaries) == 6
    assert sum(s["scanned"] for s in summaries) == 7
    assert summaries[0]["period_s"] == 80.0 and summaries[1]["period_s"] == 80.0
    assert runner.passes == 6


def test_read_only_passes_say_what_they_would_do_when_it_changes(r, make_runner, caplog) -> None:
    ids = build_pel(r, 20, idle={1: HOUR})
    runner = make_runner(read_only=True)
    with caplog.at_level(logging.DEBUG, logger="pelctl.reclaim"):
        runner.run_pass()
        runner.run_pass()
        sc.set_idle(r, b"s", b"g", b"c1", [ids[2]], HOUR)
        runner.run_pass()
        runner.run_pass()
    levels = [rec.levelno for rec in caplog.records if rec.getMessage() == "pass"]
    assert levels == [logging.INFO, logging.DEBUG, logging.INFO, logging.DEBUG]
    assert not copies(r)
