"""Every error is one line on stderr (`error: ...`, maybe `hint: ...`), no traceback, and the
documented exit code (docs/safety.md): 2 usage, 3 stream/group not found, 4 cannot connect /
auth / ACL."""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port
from tests.cli.conftest import PASSWORD, READER_PASSWORD
from tests.conftest import CliResult, RedisServer

WRONG = "wr0ng-pw-5d1e"


def assert_one_error(res: CliResult, code: int, *needles: str) -> str:
    """Exactly one `error:` line (plus an optional `hint:` line); returns the error line."""
    assert res.exit_code == code, (res.exit_code, res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert lines, "nothing on stderr"
    assert lines[0].startswith("error: "), res.stderr
    assert len(lines) <= 2, res.stderr
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert res.stdout == ""
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def assert_no_secret(res: CliResult, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in res.stdout
        assert secret not in res.stderr


@pytest.fixture
def data(r) -> None:
    sc.add_entries(r, b"s", 10)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"c", 3)
    r.set(b"a-string", b"x")
    r.hset(b"a-hash", b"f", b"v")
    r.rpush(b"a-list", b"x")
    r.sadd(b"a-set", b"x")
    r.zadd(b"a-zset", {b"x": 1})


def closed_url(password: str | None = None) -> str:
    auth = f":{password}@" if password else ""
    return f"redis://{auth}127.0.0.1:{free_port()}/0"


# -- not found (3) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["inspect", "nope"],
        ["pending", "nope", "g"],
        ["inspect", "nope", "-o", "json"],
        ["pending", "nope", "g", "--with-payload", "--all"],
        ["pending", "nope", "g", "-o", "json"],  # no lone "[" on stdout
        ["pending", "nope", "g", "-o", "table"],
    ],
)
def test_missing_stream_exit_3(data, cli, args) -> None:
    line = assert_one_error(cli(*args), 3, "nope", "not found")
    assert line == "error: stream nope not found"


@pytest.mark.parametrize(
    "args",
    [
        ["pending", "s", "nog"],
        ["inspect", "s", "--group", "nog"],
        ["inspect", "s", "-g", "nog"],
        ["pending", "s", "nog", "--idle", "1s"],
        ["pending", "s", "nog", "-c", "c"],
        ["pending", "s", "nog", "-o", "json", "--all"],
        ["pending", "s", "nog", "-o", "csv"],
    ],
)
def test_missing_group_exit_3(data, cli, args) -> None:
    line = assert_one_error(cli(*args), 3, "nog", "s")
    assert line == "error: group nog not found on stream s"


@pytest.mark.parametrize("key", ["a-string", "a-hash", "a-list", "a-set", "a-zset"])
@pytest.mark.parametrize("command", [["inspect"], ["pending"]])
def test_key_of_another_type_exit_3(data, cli, key, command) -> None:
    args = [*command, key] + (["g"] if command == ["pending"] else [])
    kind = key.split("-")[1]
    assert_one_error(cli(*args), 3, key, f"is a {kind}, not a stream")


def test_missing_consumer_is_exit_3_with_the_known_ones(data, cli) -> None:
    """A consumer filter that matches no consumer is a typo, not an empty list."""
    res = cli("pending", "s", "g", "--consumer", "ghost-consumer", "-o", "ndjson")
    line = assert_one_error(res, 3)
    assert line == "error: --consumer ghost-consumer: no such consumer in s/g"
    assert res.stderr.splitlines()[1] == "hint: known consumers: c"
    res = cli("pending", "s", "g", "--consumer", "cc")
    assert_one_error(res, 3)
    assert res.stderr.splitlines()[1] == "hint: did you mean c? known consumers: c"


def test_not_found_binary_name_is_escaped(data, cli) -> None:
    line = assert_one_error(cli("inspect", "no\\xffpe"), 3)
    assert line == "error: stream no\\xffpe not found"


# -- usage (2) ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["5x", "1h30", "-5s", "1.2.3s", "ms", "²", " ", ""])
def test_bad_duration_exit_2(data, cli, value) -> None:
    line = assert_one_error(cli("pending", "s", "g", "--idle", value), 2)
    assert ("empty duration" if not value.strip() else "invalid duration") in line, line


def test_bad_duration_in_inspect_exit_2(data, cli) -> None:
    assert_one_error(cli("inspect", "s", "--dead-after", "5x"), 2, "invalid duration '5x'")


def test_bad_duration_checked_before_connecting(cli) -> None:
    res = cli("pending", "s", "g", "--idle", "5x", "--url", closed_url())
    assert_one_error(res, 2, "invalid duration")


@pytest.mark.parametrize("args", [["--all", "--limit", "5"], ["-A", "-n", "1"]])
def test_all_with_limit_exit_2(data, cli, args) -> None:
    assert_one_error(cli("pending", "s", "g", *args), 2, "--all and --limit")


def test_unsupported_url_scheme_exit_2(cli) -> None:
    res = cli("streams", "--url", f"http://:{PASSWORD}@example.com/")
    assert_one_error(res, 2, "unsupported URL scheme")
    assert_no_secret(res, PASSWORD)


def test_tls_options_need_rediss_exit_2(data, cli) -> None:
    assert_one_error(cli("streams", "--tls-ca", "/nonexistent/ca.pem"), 2, "rediss://")


# -- cannot connect (4) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["streams"],
        ["inspect", "s"],
        ["pending", "s", "g"],
        ["version", "--server"],
        ["pending", "s", "g", "-o", "ndjson"],
    ],
)
def test_unreachable_host_exit_4(cli, args) -> None:
    res = cli(*args, "--url", closed_url())
    line = assert_one_error(res, 4, "cannot connect")
    assert "Connection refused" in line


def test_unreachable_socket_exit_4(cli, tmp_path) -> None:
    res = cli("streams", "--url", f"unix://{tmp_path}/missing.sock")
    assert_one_error(res, 4, "cannot connect")


def test_unreachable_via_env_exit_4(cli) -> None:
    res = cli("streams", env={"PELCTL_URL": closed_url(PASSWORD)})
    assert_one_error(res, 4, "cannot connect")
    assert_no_secret(res, PASSWORD)


@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_unreachable_url_is_redacted(cli, verbose) -> None:
    res = cli(*verbose, "inspect", "s", "--url", closed_url(PASSWORD))
    assert res.exit_code == 4
    assert_no_secret(res, PASSWORD)
    if not verbose:
        assert_one_error(res, 4, "redis://")
    else:  # -v adds the traceback, still without the password
        assert "Traceback" in res.stderr
        assert res.stderr.splitlines()[-2].startswith("error: ")


def test_wrong_password_in_url_exit_4(secured, cli) -> None:
    url = f"redis://:{WRONG}@127.0.0.1:{secured.port}/0"
    res = cli("inspect", "s", "--url", url)
    assert_one_error(res, 4, "authentication failed")
    assert_no_secret(res, WRONG, PASSWORD)


def test_wrong_password_via_rediscli_auth_exit_4(secured, cli) -> None:
    res = cli("pending", "s", "g", env={"PELCTL_URL": secured.url, "REDISCLI_AUTH": WRONG})
    assert_one_error(res, 4, "authentication failed")
    assert_no_secret(res, WRONG)


def test_wrong_username_exit_4(secured, cli) -> None:
    url = f"redis://nobody:{PASSWORD}@127.0.0.1:{secured.port}/0"
    res = cli("streams", "--url", url)
    assert_one_error(res, 4, "authentication failed")
    assert_no_secret(res, PASSWORD)


def test_no_password_exit_4(secured, cli) -> None:
    assert_one_error(cli("streams", "--url", secured.url), 4, "authentication failed")


def test_wrong_password_via_askpass_exit_4(secured, cli) -> None:
    res = cli("streams", "--url", secured.url, "--askpass", input=f"{WRONG}\n")
    assert_one_error(res, 4, "authentication failed")
    assert_no_secret(res, WRONG)


@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_wrong_password_never_printed_even_verbose(secured, cli, verbose) -> None:
    url = f"redis://admin:{WRONG}@127.0.0.1:{secured.port}/0"
    res = cli(*verbose, "streams", "--url", url)
    assert res.exit_code == 4
    assert_no_secret(res, WRONG)


@pytest.mark.parametrize(
    ("how", "extra_env", "extra_args", "stdin"),
    [
        ("url", {}, ["--url", "URL_WITH_PASSWORD"], None),
        ("REDISCLI_AUTH", {"REDISCLI_AUTH": PASSWORD}, [], None),
        ("askpass", {}, ["--askpass"], f"{PASSWORD}\n"),
    ],
)
def test_right_password_works_and_is_never_printed(
    secured,
    cli,
    how,
    extra_env,
    extra_args,
    stdin,
) -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:{secured.port}/0"
    args = [url if a == "URL_WITH_PASSWORD" else a for a in extra_args]
    env = {"PELCTL_URL": secured.url, **extra_env}
    for command in (
        ["streams"],
        ["inspect", "s"],
        ["pending", "s", "g", "-o", "json"],
        ["version", "--server", "-o", "json"],
        ["config", "show", "-o", "json"],
        ["inspect", "missing"],
    ):
        res = cli(*command, *args, env=env, input=stdin)
        assert res.exit_code == (3 if command[-1] == "missing" else 0), (how, res.stderr)
        assert_no_secret(res, PASSWORD)
    show = cli("config", "show", "-o", "json", *args, env=env, input=stdin).json
    assert show["password"] == "***"


# -- ACL (4) ------------------------------------------------------------------------------


def _reader_url(secured: RedisServer, user: str) -> str:
    return f"redis://{user}:{READER_PASSWORD}@127.0.0.1:{secured.port}/0"


@pytest.mark.parametrize(
    ("user", "args"),
    [
        ("no-xpending", ["pending", "s", "g"]),
        ("no-xpending", ["inspect", "s"]),
        ("no-xinfo", ["inspect", "s"]),
        ("no-xinfo", ["pending", "s", "g"]),
        ("no-xinfo", ["streams"]),
        ("other-keys", ["inspect", "s"]),
        ("other-keys", ["pending", "s", "g", "-o", "ndjson"]),
    ],
)
def test_acl_noperm_on_read_exit_4(secured, cli, user, args) -> None:
    res = cli(*args, "--url", _reader_url(secured, user))
    assert_one_error(res, 4, "permission denied")
    assert_no_secret(res, READER_PASSWORD)


def test_acl_user_with_rights_reads(secured, cli) -> None:
    url = f"redis://default:{PASSWORD}@127.0.0.1:{secured.port}/0"
    res = cli("streams", "--url", url, "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert [s["stream"] for s in res.json] == ["s"]


# -- config errors (2) --------------------------------------------------------------------


def test_unknown_context_exit_2(cli) -> None:
    assert_one_error(cli("streams", "--context", "prod"), 2, "no context named 'prod'")


def test_broken_config_file_exit_2(cli, tmp_path) -> None:
    path = tmp_path / "config" / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[contexts.x\nurl = 1\n")
    assert_one_error(cli("streams"), 2, "cannot read config file")
    path.write_text('[contexts.x]\nurl = "redis://h"\nbogus = 1\n')
    assert_one_error(cli("streams"), 2, "unknown keys: bogus")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("url = 6379", "url must be a string, not 6379"),
        ('read_only = "yes"', "read_only must be a boolean, not 'yes'"),
        ("password = 123456789", "password must be a string"),
    ],
)
def test_config_value_of_wrong_type_exit_2(cli, tmp_path, line, message) -> None:
    path = tmp_path / "config" / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(f"[contexts.x]\n{line}\n")
    path.chmod(0o600)
    res = cli("streams")
    assert_one_error(res, 2, message)
    assert "123456789" not in res.stderr  # a password is never echoed, even a malformed one
