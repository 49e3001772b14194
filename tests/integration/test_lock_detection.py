"""inspect finds the lock keys workers hold without being told their pattern, and
the advice then carries ``--lock-key``. Bounded and harmless: a few ``EXISTS`` on entries
inspect already read, only for a group whose advice would repair something, a key the ACL
hides is a key not seen. A pattern given (``--lock-key``, the context's ``lock_key``) is
used as is."""

from __future__ import annotations

import pytest

from pelctl.core.inspect import inspect_stream
from pelctl.core.locks import LOCK_DETECT_KEYS, LOCK_PATTERNS, lock_key
from pelctl.demo import scenario as sc
from pelctl.demo.timeshift import backdate_consumers
from tests.integration.verdicts import quiet_verdict

S, G = b"jobs", b"workers"
HOUR = 3_600_000


def exists_calls(r) -> int:
    return int(r.info("commandstats").get("cmdstat_exists", {}).get("calls", 0))


def quiet_group(r, consumers: int = 2, each: int = 3) -> dict[bytes, list[bytes]]:
    """``consumers`` consumers holding ``each`` entries, all quiet for an hour."""
    sc.add_entries(r, S, consumers * each + 5)
    sc.create_group(r, S, G)
    held = {}
    for n in range(consumers):
        name = f"w-{n}".encode()
        held[name] = sc.deliver(r, S, G, name, each)
        sc.set_idle(r, S, G, name, held[name], HOUR)
    backdate_consumers(r, S, dict.fromkeys(held, HOUR))
    return held


def repairs(result) -> list[str]:
    return [a.command for a in result.advice if a.command and "--dry-run" in a.command]


@pytest.mark.parametrize("pattern", LOCK_PATTERNS)
def test_each_common_pattern_is_found(r, conn, pattern: str) -> None:
    held = quiet_group(r)
    busy = held[b"w-1"][-1]  # a worker's entry in flight: its newest
    r.set(lock_key(pattern, S, G, busy, b"w-1"), b"w-1", px=60_000)
    result = inspect_stream(conn, S)
    (group,) = result.groups
    verdicts = {c.name: (c.verdict, c.verdict_reason) for c in group.consumers}
    # w-0: no lock, quiet for an hour (unknown below 7.2, a dead suspect from 7.2).
    assert verdicts == {b"w-0": quiet_verdict(conn), b"w-1": ("active", "lock-held")}
    (command,) = repairs(result)
    assert command.startswith("pelctl requeue jobs workers --consumer w-0 --lock-key ")
    assert f"--lock-key '{pattern}' --dry-run" in command


def test_no_lock_key_no_flag(r, conn) -> None:
    quiet_group(r)
    result = inspect_stream(conn, S)
    assert repairs(result) == [
        "pelctl requeue jobs workers --consumer w-0 --dry-run",
        "pelctl requeue jobs workers --consumer w-1 --dry-run",
    ]


def test_the_probe_is_bounded_and_skipped_for_a_healthy_group(r, conn) -> None:
    quiet_group(r, consumers=60, each=5)  # 300 entries of 60 quiet consumers, no lock
    before = exists_calls(r)
    inspect_stream(conn, S)
    assert 0 < exists_calls(r) - before <= LOCK_DETECT_KEYS

    r.flushall()
    sc.add_entries(r, S, 10)
    sc.create_group(r, S, G)
    sc.deliver(r, S, G, b"busy", 5)  # read just now: nothing to repair
    before = exists_calls(r)
    inspect_stream(conn, S)
    assert exists_calls(r) == before
    # Asked not to look, it does not.
    sc.create_group(r, S, b"other")
    ids = sc.deliver(r, S, b"other", b"gone", 3)
    sc.set_idle(r, S, b"other", b"gone", ids, HOUR)
    backdate_consumers(r, S, {b"gone": HOUR})
    before = exists_calls(r)
    inspect_stream(conn, S, detect_locks=False)
    assert exists_calls(r) == before


def test_a_given_pattern_is_used_as_is(r, conn) -> None:
    held = quiet_group(r)
    r.set(b"busy/" + held[b"w-1"][0], b"1", px=60_000)
    before = exists_calls(r)
    result = inspect_stream(conn, S, lock_key="busy/{id}")
    assert exists_calls(r) > before  # its own probe
    (command,) = repairs(result)
    assert command == "pelctl requeue jobs workers --consumer w-0 --lock-key 'busy/{id}' --dry-run"


def test_lock_keys_the_acl_hides_are_not_an_error(r, redis_server) -> None:
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    quiet_group(r)
    r.execute_command("ACL", "SETUSER", "jobs-only", "on", ">pw-jobs", "~jobs*", "+@all")
    try:
        url = f"redis://jobs-only:pw-jobs@127.0.0.1:{redis_server.port}/0"
        limited = connect(ConnectionSettings(url=url))
        try:
            result = inspect_stream(limited, S)
        finally:
            limited.close()
    finally:
        r.execute_command("ACL", "DELUSER", "jobs-only")
    assert len(repairs(result)) == 2 and "--lock-key" not in " ".join(repairs(result))


def test_the_context_lock_key_is_the_default_of_inspect_and_the_repairs(
    cli, r, tmp_path, redis_server
) -> None:
    held = quiet_group(r)
    r.set(b"busy/" + held[b"w-1"][0], b"1", px=60_000)
    config = tmp_path / "config" / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[contexts.c]\nurl = "{redis_server.url}"\nlock_key = "busy/{{id}}"\n')
    doc = cli("--context", "c", "inspect", "jobs", "-o", "json").json
    assert [a["command"] for a in doc["advice"] if a.get("command")] == [
        "pelctl requeue jobs workers --consumer w-0 --lock-key 'busy/{id}' --dry-run"
    ]
    plan = cli(
        "--context",
        "c",
        "requeue",
        "jobs",
        "workers",
        "--consumer",
        "w-1",
        "--dry-run",
        "-o",
        "json",
    ).json
    assert [(p["outcome"], p["note"]) for p in plan["plan"]][0] == ("alive", "alive")
