"""ACL users: the documented minimal read-only rules suffice for every read command (and each
rule is needed), every mutation refused by the ACL is one clear NOPERM line with exit 4."""

from __future__ import annotations

import pytest

from tests.support.state import assert_unchanged, snapshot
from tests.topologies import commands as cm
from tests.topologies.conftest import PASSWORDS, READ_ONLY_RULES, REPAIR_KEYS_FOR_S, REPAIR_RULES
from tests.topologies.runner import one_error_line, run_pelctl


@pytest.fixture
def acl(acl_server):
    admin = acl_server.admin()
    admin.flushall()
    cm.seed(admin)
    yield acl_server
    admin.close()


def test_reader_runs_every_read_only_command(acl):
    url = acl.url_for("reader")
    reads = cm.read_invocations()
    assert len(reads) >= 8
    for args in reads:
        res = run_pelctl(*args, "-o", "json", url=url)
        assert res.exit_code == 0, (args, res.stderr)
        assert "error" not in res.stderr, (args, res.stderr)


def test_reader_with_password_from_rediscli_auth(acl):
    """No secret in argv: user from PELCTL_USERNAME, password from REDISCLI_AUTH."""
    env = {"REDISCLI_AUTH": PASSWORDS["reader"], "PELCTL_USERNAME": "reader"}
    res = run_pelctl("inspect", "s", "-o", "json", url=acl.server.url, env=env)
    assert res.exit_code == 0, res.stderr
    assert res.json["stream"] == "s"


COMMAND_RULES = [r for r in READ_ONLY_RULES if r.startswith("+")]


@pytest.mark.parametrize("rule", COMMAND_RULES)
def test_each_read_only_rule_is_needed(acl, rule):
    """Drop one rule: some read command now fails with a NOPERM line naming it (exit 4)."""
    admin = acl.admin()
    rules = [r for r in READ_ONLY_RULES if r != rule]
    admin.execute_command("ACL", "SETUSER", "trimmed", "reset", "on", ">trimmed-pw", *rules)
    url = f"redis://trimmed:trimmed-pw@127.0.0.1:{acl.server.port}/0"
    failures = []
    for args in cm.read_invocations():
        res = run_pelctl(*args, url=url)
        if res.exit_code:
            assert res.exit_code == 4, (args, res.stderr)
            line = one_error_line(res)
            assert "permission denied by the server's ACL" in line
            failures.append(line)
    admin.execute_command("ACL", "DELUSER", "trimmed")
    admin.close()
    assert failures, f"{rule} is not needed by any read-only command: drop it from the docs"
    command = rule.lstrip("+")
    assert any(f"'{command}'" in line for line in failures), failures


def test_user_without_read_rights_gets_one_noperm_line(acl):
    url = acl.url_for("nobody")
    for args in cm.read_invocations():
        res = run_pelctl(*args, url=url)
        assert res.exit_code == 4, (args, res.stderr)
        line = one_error_line(res)
        assert "permission denied by the server's ACL" in line, line
        assert "hint: the ACL user lacks a command or key" in res.stderr
        assert PASSWORDS["nobody"] not in res.stderr + res.stdout


def test_key_pattern_limits_are_noperm_too(acl):
    admin = acl.admin()
    admin.execute_command(
        "ACL",
        "SETUSER",
        "narrow",
        "reset",
        "on",
        ">narrow-pw",
        "~other:*",
        *[r for r in READ_ONLY_RULES if r.startswith("+")],
    )
    url = f"redis://narrow:narrow-pw@127.0.0.1:{acl.server.port}/0"
    res = run_pelctl("inspect", "s", url=url)
    admin.execute_command("ACL", "DELUSER", "narrow")
    admin.close()
    assert res.exit_code == 4
    assert "no permissions to access one of the keys" in one_error_line(res)


def test_wrong_password_is_auth_failure_exit_4(acl):
    url = f"redis://reader:not-the-password@127.0.0.1:{acl.server.port}/0"
    res = run_pelctl("streams", url=url)
    assert res.exit_code == 4
    assert "authentication failed" in one_error_line(res)
    assert "not-the-password" not in res.stderr


def test_every_mutation_is_covered():
    missing = cm.mutating_commands() - {name.partition("#")[0] for name in cm.MUTATIONS}
    assert not missing, (
        f"mutating commands without an entry in tests/topologies/commands.py MUTATIONS: "
        f"{sorted(missing)}"
    )


def test_reader_gets_noperm_for_every_mutation(acl, tmp_path):
    url = acl.url_for("reader")
    admin = acl.admin()
    for name, args in cm.mutation_invocations().items():
        args = cm.prepare(args, acl.admin_url, str(tmp_path))
        before = snapshot(admin)
        res = run_pelctl(*args, url=url)
        assert res.exit_code == 4, (name, res.stdout, res.stderr)
        line = one_error_line(res)
        assert "permission denied by the server's ACL" in line, (name, line)
        assert_unchanged(before, admin, what=f"{name} refused by the ACL")
    admin.close()


def test_repair_user_can_run_every_mutation(acl, tmp_path):
    url = acl.url_for("repair")
    admin = acl.admin()
    for name, args in cm.mutation_invocations().items():
        admin.flushall()
        cm.seed(admin)
        args = cm.prepare(args, acl.admin_url, str(tmp_path))
        res = run_pelctl(*args, "-o", "json", url=url)
        assert res.exit_code == 0, (name, res.stdout, res.stderr)
        cm.check_outcome(name, res.json, admin)
    admin.close()


REPAIR_ONLY_RULES = [r for r in REPAIR_RULES if r not in READ_ONLY_RULES]


@pytest.mark.parametrize("rule", REPAIR_ONLY_RULES)
def test_each_repair_rule_is_needed(acl, rule, tmp_path):
    """Drop one repair rule: some mutation no longer succeeds, and the ACL log names it."""
    mutations = cm.mutation_invocations()
    admin = acl.admin()
    rules = [r for r in REPAIR_RULES if r != rule]
    admin.execute_command("ACL", "SETUSER", "trimmed", "reset", "on", ">trimmed-pw", *rules)
    url = f"redis://trimmed:trimmed-pw@127.0.0.1:{acl.server.port}/0"
    denied: list[bytes] = []
    try:
        for args in mutations.values():
            admin.flushall()
            cm.seed(admin)
            args = cm.prepare(args, acl.admin_url, str(tmp_path))
            admin.execute_command("SCRIPT", "FLUSH")  # so SCRIPT LOAD is exercised too
            admin.execute_command("ACL", "LOG", "RESET")
            res = run_pelctl(*args, url=url)
            denied += [str(entry.get("object")) for entry in admin.acl_log()]
            if res.exit_code != 0:
                break
    finally:
        admin.execute_command("ACL", "DELUSER", "trimmed")
        admin.close()
    assert res.exit_code != 0, f"{rule} is not needed by any mutation: drop it from the docs"
    assert rule.lstrip("+") in denied, (rule, denied)


def test_repair_user_limited_to_one_stream_by_key_patterns(acl, tmp_path):
    """The documented key patterns for a repair user confined to stream ``s`` suffice."""
    mutations = cm.mutation_invocations()
    admin = acl.admin()
    rules = [r for r in REPAIR_RULES if r not in ("resetkeys", "~*")]
    admin.execute_command(
        "ACL", "SETUSER", "scoped", "reset", "on", ">scoped-pw", *rules, *REPAIR_KEYS_FOR_S
    )
    url = f"redis://scoped:scoped-pw@127.0.0.1:{acl.server.port}/0"
    try:
        for name, args in mutations.items():
            if name in ("dlq replay", "dlq purge") and "s:dlq" not in args:
                continue
            admin.flushall()
            cm.seed(admin)
            args = cm.prepare(args, acl.admin_url, str(tmp_path))
            res = run_pelctl(*args, "-o", "json", url=url)
            assert res.exit_code == 0, (name, res.stdout, res.stderr)
            cm.check_outcome(name, res.json, admin)
        # ... and nothing else: another stream is out of reach.
        admin.flushall()
        cm.seed(admin, b"other")
        res = run_pelctl("inspect", "other", url=url)
        assert res.exit_code == 4 and "no permissions to access" in one_error_line(res)
    finally:
        admin.execute_command("ACL", "DELUSER", "scoped")
        admin.close()


def test_key_limited_reader_lists_streams_within_its_pattern(acl):
    """docs/security.md: a user limited to some keys names a --match glob within them."""
    admin = acl.admin()
    cm.seed(admin, b"orders")
    rules = [r for r in READ_ONLY_RULES if r not in ("resetkeys", "~*")]
    admin.execute_command(
        "ACL", "SETUSER", "orders-ro", "reset", "on", ">o-pw", "resetkeys", "~orders*", *rules
    )
    url = f"redis://orders-ro:o-pw@127.0.0.1:{acl.server.port}/0"
    try:
        res = run_pelctl("streams", url=url)
        assert res.exit_code == 4 and "permission denied" in one_error_line(res)
        res = run_pelctl("streams", "--match", "orders*", "-o", "json", url=url)
        assert res.exit_code == 0, res.stderr
        assert {r["stream"] for r in res.json} == {"orders", "orders:dlq"}
        res = run_pelctl("inspect", "orders", "-o", "json", url=url)
        assert res.exit_code == 0, res.stderr
    finally:
        admin.execute_command("ACL", "DELUSER", "orders-ro")
        admin.close()


def test_wide_entries_need_only_the_documented_rules(acl):
    """docs/security.md: requeue and dlq move of a 10,000-field entry (the ordered path) need
    no rule beyond the repair rules; replaying one needs +watch +multi +exec and the marker
    set's rules, and each of them is needed."""
    from tests.integration.test_wide_entries import dead_letter_batch, replayed
    from tests.integration.wide_support import build_batch, internal_holders, pending
    from tests.topologies.conftest import CROSS_SLOT_REPLAY_RULES, WIDE_REPLAY_RULES

    admin = acl.admin()
    url = acl.url_for("repair")
    try:
        admin.flushall()
        batch = build_batch(admin)
        res = run_pelctl("requeue", "s", "g", "--idle", "30m", "--yes", url=url)
        assert res.exit_code == 0, res.stderr
        assert not pending(admin) and not internal_holders(admin)
        admin.flushall()
        batch = build_batch(admin, deliveries=9)
        res = run_pelctl("dlq", "move", "s", "g", "--min-deliveries", "5", "--yes", url=url)
        assert res.exit_code == 0, res.stderr
        assert admin.xlen("s:dlq") == len(batch.ids)

        rules = REPAIR_RULES + CROSS_SLOT_REPLAY_RULES + WIDE_REPLAY_RULES
        wide_url = f"redis://wide:wide-pw@127.0.0.1:{acl.server.port}/0"
        for missing in [None, *WIDE_REPLAY_RULES, *CROSS_SLOT_REPLAY_RULES]:
            admin.flushall()
            ids, _bodies = dead_letter_batch(admin)
            admin.execute_command(
                "ACL",
                "SETUSER",
                "wide",
                "reset",
                "on",
                ">wide-pw",
                *[r for r in rules if r != missing],
            )
            admin.execute_command("ACL", "LOG", "RESET")
            res = run_pelctl(
                "dlq", "replay", "s:dlq", "--id", ids[1].decode(), "--yes", url=wide_url
            )
            if missing is None:
                assert res.exit_code == 0, res.stderr
                assert admin.xlen("s:dlq") == len(ids) - 1
                assert list(replayed(admin)) == [ids[1]]
            else:
                assert res.exit_code == 4, (missing, res.stdout, res.stderr)
                assert "permission denied by the server's ACL" in one_error_line(res)
                denied = [str(entry.get("object")) for entry in admin.acl_log()]
                assert missing.lstrip("+") in denied, (missing, denied)
                assert admin.xlen("s:dlq") == len(ids)  # nothing replayed, nothing lost
                assert not replayed(admin), missing  # and no copy was written
    finally:
        admin.execute_command("ACL", "DELUSER", "wide")
        admin.close()
