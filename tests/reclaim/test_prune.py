"""``reclaim --prune-consumers-after D``: workers that die leave their names; the loop deletes
consumers that hold nothing and have not tried to read for D, each atomically with that
check, counted in the metrics, the pass's log line and its audit line. On 7.0 and 8.6."""

from __future__ import annotations

import json

from pelctl.demo.timeshift import backdate_consumers
from tests.reclaim.conftest import HOUR, build_pel

PRUNE = ("reclaim", "s", "-g", "g", "--idle", "30s", "--once", "--prune-consumers-after", "1h")


def consumers(r) -> set[bytes]:
    return {c["name"] for c in r.xinfo_consumers(b"s", b"g")}


def crowd(r) -> None:
    """c1 holds entries; gone-1 and gone-2 hold nothing and were last seen 2 h ago; c1 too
    (it holds entries: never pruned); fresh holds nothing but just read."""
    build_pel(r, 20)
    for name in (b"gone-1", b"gone-2", b"fresh"):
        r.xgroup_createconsumer(b"s", b"g", name)
    backdate_consumers(r, b"s", {b"gone-1": 2 * HOUR, b"gone-2": 2 * HOUR, b"c1": 2 * HOUR})


def test_empty_quiet_consumers_are_deleted_and_audited(r, cli, tmp_path) -> None:
    crowd(r)
    res = cli(*PRUNE, "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["consumers_pruned"] == 2
    assert res.json["streams"][0]["consumers_pruned"] == 2
    assert consumers(r) == {b"c1", b"fresh"}
    (line,) = (tmp_path / "state" / "pelctl" / "audit.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert sorted(record["pruned_consumers"]) == ["gone-1", "gone-2"]
    assert record["params"]["prune_consumers_after_ms"] == HOUR
    assert '"consumer-pruned"' in res.stderr


def test_read_only_names_them_and_deletes_nothing(r, cli) -> None:
    crowd(r)
    res = cli(*PRUNE, "--read-only", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert res.json["consumers_pruned"] == 2
    assert consumers(r) == {b"c1", b"gone-1", b"gone-2", b"fresh"}


def test_the_metric_and_the_to_target(r, make_runner) -> None:
    from pelctl.reclaim.metrics import ReclaimMetrics

    crowd(r)
    metrics = ReclaimMetrics()
    runner = make_runner(metrics=metrics, prune_after_ms=HOUR, strategy="claim", to=b"gone-2")
    assert runner.run_pass().totals.consumers_pruned == 1  # --to is kept
    assert consumers(r) == {b"c1", b"gone-2", b"fresh"}
    assert 'recovery_consumers_pruned_total{group="g",stream="s"} 1.0' in metrics.text()
    assert runner.run_pass().totals.consumers_pruned == 0


def test_a_consumer_that_reads_again_is_not_deleted(r, make_runner, monkeypatch) -> None:
    """Listed as quiet, then it reads before its delete: the script's re-check keeps it."""
    from pelctl.reclaim import strategies

    crowd(r)
    real = strategies.script

    def late_reader(name: str):
        if name == "consumer_delete":  # between the listing and the delete
            r.xadd(b"s", {b"n": b"late"})
            r.xreadgroup(b"g", b"gone-1", {b"s": ">"}, count=1)
        return real(name)

    monkeypatch.setattr(strategies, "script", late_reader)
    runner = make_runner(prune_after_ms=HOUR)
    assert runner.run_pass().totals.consumers_pruned == 1
    assert b"gone-1" in consumers(r) and b"gone-2" not in consumers(r)


def test_a_bad_duration_is_one_line(cli) -> None:
    res = cli("reclaim", "s", "-g", "g", "--idle", "30s", "--prune-consumers-after", "soon")
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    assert "soon" in res.stderr
