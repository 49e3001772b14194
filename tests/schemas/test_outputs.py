"""One test per command that prints JSON: its output, on a real incident, matches the schema
of docs/schemas/ (checked here explicitly; the ``cli`` fixture checks it too), and the keys
one vocabulary unified read the one way (docs/formats.md, "One vocabulary").

Together the cases run every command of :data:`tests.schemas.checker.OUTPUTS`:
:func:`test_every_json_command_has_a_case` reads this file's ``run(cli, "<command>", ...)``
calls. The Spark commands (``snapshot``, ``analyze``) need pyarrow, Spark and Java: their
cases are in tests/spark (:data:`SPARK_CASES`), where the ``cli`` fixture validates them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pelctl.base.paths import audit_path
from tests.integration.repair_support import ALIVE, DEAD, G, S, incident, raw
from tests.schemas.checker import OUTPUTS, check


@pytest.fixture
def scene(r) -> dict[str, list[bytes]]:
    """20 entries of a consumer unseen for an hour (one of them deleted: a ghost), 5 fresh
    ones, and a dead-letter stream with 2 entries moved there."""
    stuck, fresh = incident(r)
    raw(r).execute_command("XDEL", S, stuck[-1])
    return {"stuck": stuck, "fresh": fresh}


def run(cli, command: str, *args: str, code: int = 0) -> object:
    """Run ``pelctl *args``, check the exit code and every JSON value against ``command``'s
    schema."""
    res = cli(*args)
    assert res.exit_code == code, (args, res.stderr)
    doc_ref, line_ref = OUTPUTS[command]
    if "ndjson" in args:
        values = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
        assert values, args
        for value in values:
            check(line_ref, value, " ".join(args))
        return values
    value = json.loads(res.stdout)
    if isinstance(value, list):
        for item in value:
            check(line_ref, item, " ".join(args))
    elif not doc_ref.startswith("#"):  # ghosts: a choice the cli fixture makes
        check(doc_ref, value, " ".join(args))
    return value


def test_streams(cli, scene) -> None:
    run(
        cli,
        "dlq-move",
        "dlq",
        "move",
        "orders",
        "billing",
        "--min-deliveries",
        "1",
        "--limit",
        "2",
        "--yes",
        "-o",
        "json",
    )
    rows = {s["stream"]: s for s in run(cli, "streams", "streams", "-o", "json")}
    assert rows["orders"]["is_dlq"] is False and rows["orders:dlq"]["is_dlq"] is True
    assert rows["orders"]["group_count"] == 1 and "dlq" not in rows["orders"]


def test_inspect(cli, scene) -> None:
    doc = run(cli, "inspect", "inspect", "orders", "-o", "json")
    (group,) = doc["groups"]
    assert group["group"] == "billing" and "name" not in group
    assert {c["consumer"] for c in group["consumers"]} == {ALIVE.decode(), DEAD.decode()}
    assert all("name" not in c for c in group["consumers"])
    assert doc["server_version"].startswith(("redis ", "valkey ")) and doc["dlq"] is None
    # Redis 7.0 has no idempotent producers (the 8.6 case: tests/integration/test_inspect_idmp)
    assert doc["idmp"] is None
    (line,) = run(cli, "inspect", "inspect", "orders", "-o", "ndjson")
    assert line["groups"][0]["group"] == "billing"


def test_pending(cli, scene) -> None:
    lines = run(cli, "pending", "pending", "orders", "billing", "-o", "ndjson")
    assert len(lines) == 25 and {e["consumer"] for e in lines} == {"billing-1", "billing-2"}
    entries = run(cli, "pending", "pending", "orders", "billing", "--with-payload", "-o", "json")
    assert sum(e["ghost"] for e in entries) == 1


def test_histogram(cli, scene) -> None:
    doc = run(cli, "histogram", "histogram", "orders", "billing", "-o", "json")
    assert doc["total"] == 25
    by = run(cli, "histogram", "histogram", "orders", "billing", "--by", "consumer", "-o", "json")
    assert {b["consumer"]: b["count"] for b in by["buckets"]} == {"billing-2": 20, "billing-1": 5}
    assert all("label" not in b for b in by["buckets"])
    run(cli, "histogram", "histogram", "orders", "billing", "--by", "consumer", "-o", "ndjson")


def test_ghosts(cli, scene) -> None:
    (ghost,) = run(cli, "ghosts", "ghosts", "orders", "billing", "-o", "ndjson")
    assert ghost["consumer"] == DEAD.decode()
    from tests.schemas.checker import errors

    counts = json.loads(cli("ghosts", "orders", "billing", "--count", "-o", "json").stdout)
    assert errors("ghosts.json#/$defs/counts", counts) == []
    fix = run(cli, "ghosts", "ghosts", "orders", "billing", "--fix", "--dry-run", "-o", "json")
    assert errors("repair-result.json", fix) == [] and fix["outcomes"] == {"ghost": 1}


# (command, its arguments, the dry run's outcomes of the 20 idle entries, one of them a
# ghost, and the applied ones: ack does not look at the stream entry, requeue and dlq move
# must; claim's plan does not look, but XCLAIM drops a ghost from the PEL and says so)
REPAIRS = [
    (
        "requeue",
        ("requeue", "orders", "billing", "--idle", "30m"),
        {"requeued": 19, "ghost": 1},
        {"requeued": 19, "ghost": 1},
    ),
    (
        "claim",
        ("claim", "orders", "billing", "--to", "billing-1", "--idle", "30m"),
        {"claimed": 20},
        {"claimed": 19, "ghost": 1},
    ),
    ("ack", ("ack", "orders", "billing", "--idle", "30m"), {"acked": 20}, {"acked": 20}),
    (
        "dlq-move",
        ("dlq", "move", "orders", "billing", "--idle", "30m"),
        {"dlq": 19, "ghost": 1},
        {"dlq": 19, "ghost": 1},
    ),
]


@pytest.mark.parametrize(
    ("command", "args", "outcomes", "applied"), REPAIRS, ids=[c[0] for c in REPAIRS]
)
def test_a_repair_says_the_same_in_dry_run_apply_and_audit(
    cli,
    scene,
    command,
    args,
    outcomes,
    applied,
) -> None:
    """The dry run predicts the applied result in its words: the same outcome names, the
    same keys, and the audit line has the result's counts and ``failed``."""
    dry = run(cli, command, *args, "--dry-run", "-o", "json")
    assert dry["outcomes"] == outcomes, dry["outcomes"]
    assert {p["outcome"] for p in dry["plan"]} == set(outcomes)
    assert all(p["consumer"] == DEAD.decode() for p in dry["plan"])
    lines = run(cli, command, *args, "--dry-run", "-o", "ndjson")
    assert lines[-1]["dry_run"] is True and len(lines) == 21
    done = run(cli, command, *args, "--yes", "-o", "json")
    assert done["outcomes"] == applied and done["failed"] == []
    assert done["failed_count"] == 0 and done["interrupted"] is False
    assert set(done) == set(dry) - {"plan"}
    (line,) = [json.loads(x) for x in audit_path().read_text().splitlines()]
    check("audit-line.json", line)
    assert line["action"] == done["action"] and line["outcomes"] == done["outcomes"]
    assert {k: line[k] for k in ("matched", "applied", "skipped", "failed_count", "failed")} == {
        k: done[k] for k in ("matched", "applied", "skipped", "failed_count", "failed")
    }
    assert line["id_count"] == 20 and len(line["ids"]) == 20


def test_consumers_prune_plan_says_idle_ms(cli, r, scene) -> None:
    from pelctl.demo.timeshift import backdate_consumers

    raw(r).execute_command("XGROUP", "CREATECONSUMER", S, G, b"idle-one")
    backdate_consumers(r, S, {b"idle-one": 2 * 3_600_000})
    doc = run(
        cli,
        "consumers-prune",
        "consumers",
        "prune",
        "orders",
        "billing",
        "--inactive",
        "30m",
        "--assume-dead",
        "--dry-run",
        "-o",
        "json",
    )
    rows = {p["consumer"]: p for p in doc["plan"]}
    assert rows["idle-one"]["outcome"] == "deleted" and rows["idle-one"]["idle_ms"] >= 3_600_000
    assert all("inactive_ms" not in p for p in doc["plan"])


def test_plan_file_and_apply(cli, scene, tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    res = cli("requeue", "orders", "billing", "--idle", "30m", "--plan-out", str(path))
    assert res.exit_code == 0, res.stderr
    plan = json.loads(path.read_text())
    check("plan.json", plan, "the plan file")
    assert {i["outcome"] for i in plan["items"]} == {"requeued", "ghost"}
    dry = run(cli, "apply", "apply", str(path), "--dry-run", "-o", "json")
    done = run(cli, "apply", "apply", str(path), "--yes", "-o", "json")
    assert dry["outcomes"] == done["outcomes"] == {"requeued": 19, "ghost": 1}


def test_trim(cli, r, tmp_path: Path) -> None:
    """The dry run, the saved plan, its apply and a trim: one vocabulary (the repairs'
    counts), and the audit line's params are the trim's."""
    from pelctl.demo import scenario as sc

    ids = sc.add_entries(r, b"t", 50, {b"order": b"o-1"})
    sc.create_group(r, b"t", b"g")
    sc.deliver(r, b"t", b"g", b"c", 30)
    raw(r).execute_command("XACK", b"t", b"g", *ids[:20])  # 10 still pending from the 21st
    dry = run(cli, "trim", "trim", "t", "--safe", "--dry-run", "-o", "json")
    assert (dry["matched"], dry["outcomes"], dry["bound_kind"]) == (20, {"trimmed": 20}, "pending")
    (line,) = run(cli, "trim", "trim", "t", "--safe", "--dry-run", "-o", "ndjson")
    assert set(line) == set(dry) and line["groups"] == dry["groups"]
    path = tmp_path / "trim-plan.json"
    saved = run(cli, "trim", "trim", "t", "--safe", "--plan-out", str(path), "-o", "json")
    assert saved["plan_file"] == str(path)
    check("plan.json", json.loads(path.read_text()), "the trim plan file")
    again = run(cli, "apply", "apply", str(path), "--dry-run", "-o", "json")
    assert again["matched"] == 20 and again["dry_run"] is True
    done = run(cli, "apply", "apply", str(path), "--yes", "-o", "json")
    assert (done["applied"], done["outcomes"], done["length"]) == (20, {"trimmed": 20}, 30)
    assert done["first_id"] == ids[20].decode()
    nothing = run(cli, "trim", "trim", "t", "--safe", "--yes", "-o", "json")
    assert nothing["applied"] == 0 and nothing["stopped_by"] == "pending"
    lines = [json.loads(x) for x in audit_path().read_text().splitlines()]
    for audit in lines:
        check("audit-line.json", audit)
    assert [a["applied"] for a in lines] == [20, 0]
    assert lines[0]["params"]["bound"] == ids[20].decode() and lines[0]["plan_file"] == str(path)


def test_dlq_commands(cli, scene) -> None:
    run(
        cli,
        "dlq-move",
        "dlq",
        "move",
        "orders",
        "billing",
        "--idle",
        "30m",
        "--limit",
        "3",
        "--yes",
        "-o",
        "json",
    )
    listed = run(cli, "dlq-list", "dlq", "list", "orders:dlq", "-o", "ndjson")
    assert {e["consumer"] for e in listed} == {DEAD.decode()}
    assert all("owner" not in e for e in listed)
    run(cli, "dlq-show", "dlq", "show", "orders:dlq", listed[0]["id"], "-o", "json")
    run(cli, "dlq-stats", "dlq", "stats", "-o", "json")
    for command in ("replay", "purge"):
        dry = run(
            cli, f"dlq-{command}", "dlq", command, "orders:dlq", "--all", "--dry-run", "-o", "json"
        )
        past = {"replay": "replayed", "purge": "purged"}[command]
        assert {p["outcome"] for p in dry["plan"]} == {past} and dry["failed_count"] == 0
        both = run(cli, f"dlq-{command}", "dlq", command, "--all", "--dry-run", "-o", "json")
        assert both["outcomes"] == dry["outcomes"]
    done = run(cli, "dlq-replay", "dlq", "replay", "orders:dlq", "--all", "--yes", "-o", "json")
    assert done["outcomes"] == {"replayed": 2} or done["outcomes"] == {"replayed": 3}


def test_trace_and_find(cli, scene) -> None:
    """A requeued message, then its trace (json and ndjson) and the search that finds it
    and its copy (with and without --trace, dead letters too)."""
    stuck = scene["stuck"][0].decode()
    run(cli, "requeue", "requeue", "orders", "billing", stuck, "--yes", "-o", "json")
    assert (
        cli("dlq", "move", "orders", "billing", scene["stuck"][1].decode(), "--yes").exit_code == 0
    )
    doc = run(cli, "trace", "trace", "orders", stuck, "-o", "json")
    assert [e["kind"] for e in doc["entries"]] == ["original", "requeued"]
    assert [line["action"] for line in doc["audit"]["lines"]] == ["requeue"]
    (line,) = run(cli, "trace", "trace", "orders", stuck, "-o", "ndjson")
    assert [e["id"] for e in line["entries"]] == [e["id"] for e in doc["entries"]]
    found = run(cli, "find", "find", "orders", "--contains", "o-1", "--with-dlq", "-o", "json")
    assert any(m["is_dlq"] for m in found) and all("trace" not in m for m in found)
    args = ("--field", "order_id=o-1", "-n", "2", "--trace", "-o", "ndjson")
    first, second = run(cli, "find", "find", "orders", *args)
    assert first["trace"]["id"] == first["id"] and first["traced_with"] is None
    assert second["trace"] is not None


def test_audit_tail(cli, scene) -> None:
    run(cli, "ack", "ack", "orders", "billing", "--idle", "30m", "--yes", "-o", "json")
    (line,) = run(cli, "audit-tail", "audit", "tail", "-o", "ndjson")
    assert line["action"] == "ack" and line["failed_count"] == 0 and "result" not in line


def test_reclaim_summary(cli, scene) -> None:
    doc = run(
        cli,
        "reclaim",
        "reclaim",
        "orders",
        "--group",
        "billing",
        "--idle",
        "30m",
        "--once",
        "-o",
        "json",
    )
    assert doc["failed_count"] == 0 and doc["streams"][0]["stream"] == "orders"


def test_config_version_and_demo(cli, redis_server) -> None:
    run(cli, "config-show", "config", "show", "-o", "json")
    config = Path(__import__("os").environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[contexts.prod]\nurl = "{redis_server.url}"\n')
    (ctx,) = run(cli, "config-contexts", "config", "contexts", "-o", "json")
    assert ctx["context"] == "prod" and "name" not in ctx
    doc = run(cli, "version", "version", "--server", "-o", "json")
    assert doc["server"].startswith("redis://") and doc["server_version"].startswith(
        ("redis ", "valkey ")
    )
    stopped = run(cli, "demo-status", "demo", "status", "-o", "json", code=1)  # not running
    assert stopped == {"running": False, "url": None, "pid": None}


def test_watch_frames(cli, scene) -> None:
    """--watch: -o json one document a line, -o ndjson a frame marker then its records."""
    frames = cli(
        "inspect", "orders", "--watch", "--interval", "100ms", "--count", "2", "-o", "json"
    )
    assert frames.exit_code == 0, frames.stderr
    docs = [json.loads(line) for line in frames.stdout.splitlines()]
    assert len(docs) == 2
    for doc in docs:
        check("inspect.json", doc, "inspect --watch -o json")
    res = cli(
        "pending",
        "orders",
        "billing",
        "--watch",
        "--interval",
        "100ms",
        "--count",
        "2",
        "-n",
        "3",
        "-o",
        "ndjson",
    )
    assert res.exit_code == 0, res.stderr
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(lines) == 8
    for n, line in enumerate(lines):
        marker = n % 4 == 0  # a marker, then its 3 records
        check("watch-frame.json" if marker else "pending.json", line, f"line {n + 1}")
        assert not marker or line["records"] == 3


def test_config_contexts_switch(cli, redis_server) -> None:
    config = Path(__import__("os").environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'[contexts.a]\nurl = "{redis_server.url}"\n[contexts.b]\nurl = "{redis_server.url}"\n'
    )
    doc = run(cli, "config-use-context", "config", "use-context", "b", "-o", "json")
    assert doc["current_context"] == "b" and doc["previous"] is None
    now = run(cli, "config-current-context", "config", "current-context", "-o", "json")
    assert now["current_context"] == "b"


# command -> the Spark test file that runs it with -o json through the cli fixture
SPARK_CASES = {"snapshot": "test_snapshot.py", "analyze": "test_analyze.py"}


def test_every_json_command_has_a_case() -> None:
    """Every command with a schema is run by a case above (or, for Spark, in tests/spark)."""
    spark = Path(__file__).resolve().parents[1] / "spark"
    for command, name in SPARK_CASES.items():
        # cli("<command>", ..., "-o", "json", ...) with no other cli( call in between
        call = rf'cli\(\s*"{command}",(?:(?!cli\().)*?"-o",\s*"json"'
        assert re.search(call, (spark / name).read_text(), re.S), (command, name)
    source = Path(__file__).read_text()
    covered = set(re.findall(r'run\(\s*cli,\s*f?"([a-z-]+)', source))
    covered |= {case[0] for case in REPAIRS}
    covered |= {
        f"dlq-{c}"
        for c in re.findall(r'for command in \(("[a-z]+"(?:, "[a-z]+")*)\)', source)[0]
        .replace('"', "")
        .split(", ")
    }
    assert set(OUTPUTS) - covered - set(SPARK_CASES) == set()
