"""Bad input gives one line and exit 2, before anything is sent: URL parts redis-py would
choke on (with the password redacted), out-of-range DLQ time bounds, empty consumer names
and field prefixes."""

from __future__ import annotations

import pytest

from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port
from tests.cli.test_errors import assert_one_error
from tests.integration.dlq_builders import fill
from tests.support.state import assert_unchanged, snapshot

SECRET = "s3cr3t-pw-0b7e"
HOUR = 3_600_000


def closed_url() -> str:
    """Nothing listens there: a command that got as far as connecting would exit 4."""
    return f"redis://127.0.0.1:{free_port()}/0"


# -- URLs ------------------------------------------------------------------------------------

BAD_URLS = [
    (f"redis://:{SECRET}@host:abc/0", "bad port 'abc' in redis://:***@host:abc/0"),
    (f"redis://:{SECRET}@127.0.0.1:99999/0", "bad port '99999'"),
    (f"redis://:{SECRET}@127.0.0.1:0/0", "bad port '0'"),
    (f"redis://:{SECRET}@[::1/0", "bad URL redis://:***@[::1/0"),
    (f"redis://:{SECRET}@127.0.0.1:6379/x", "bad database 'x' in redis://:***@127.0.0.1:6379/x"),
    (f"redis://:{SECRET}@127.0.0.1:6379/0/1", "bad database '0/1'"),
    (f"redis://:{SECRET}", "bad port in redis://:***"),  # the host forgotten
    (f"redis://u:{SECRET}/0", "bad port in redis://u:***/0"),
    (f"redis://:{SECRET}@h/0?socket_timeout=abc", "bad value 'abc' for URL parameter socket_"),
    (f"redis://:{SECRET}@h/0?socket_timeout=-1", "bad value '-1' for URL parameter socket_timeout"),
    (f"redis://:{SECRET}@h/0?socket_connect_timeout=nan", "socket_connect_timeout"),
    (f"redis://:{SECRET}@h/0?db=x", "bad value 'x' for URL parameter db"),
    (f"redis://:{SECRET}@h/0?db=-1", "bad value '-1' for URL parameter db"),
    (f"redis://:{SECRET}@h/0?max_connections=0", "URL parameter max_connections"),
    (f"redis://:{SECRET}@h/0?health_check_interval=soon", "health_check_interval"),
    (f"redis://:{SECRET}@h/0?socket_read_size=0", "socket_read_size"),
    (f"redis://:{SECRET}@h/0?socket_keepalive=maybe", "socket_keepalive"),
    (f"redis://:{SECRET}@h/0?retry_on_timeout=off", "retry_on_timeout"),
    (f"unix://:{SECRET}@/tmp/redis.sock?db=abc", "bad value 'abc' for URL parameter db"),
    (f"rediss://:{SECRET}@h/0?ssl_cert_reqs=sometimes", "URL parameter ssl_cert_reqs"),
    (f"rediss://:{SECRET}@h/0?ssl_check_hostname=perhaps", "ssl_check_hostname"),
    (f"rediss://:{SECRET}@h/0?ssl_min_version=tls12", "ssl_min_version"),
    (f"rediss://:{SECRET}@h/0?ssl_include_verify_flags=NOPE", "ssl_include_verify_flags"),
    (f"rediss://:{SECRET}@h/0?ssl_password={SECRET}&ssl_min_version=x", "ssl_min_version"),
    (f"redis://:{SECRET}@h/0?ssl_cert_reqs=none", "ssl_cert_reqs needs a rediss:// URL"),
    (f"redis://:{SECRET}@h/0?password={SECRET}&foo=bar", "unknown URL parameter 'foo'"),
    (f"redis://:{SECRET}@h/0?protocol=3", "URL parameter protocol is not allowed"),
    (f"redis://:{SECRET}@h/0?decode_responses=true", "decode_responses is not allowed"),
    (f"redis://:{SECRET}@h/0?client_name=x", "client_name is not allowed"),
    (f"redis://:{SECRET}@h/0?retry_on_error=x", "retry_on_error is not allowed"),
]


@pytest.mark.parametrize(("url", "needle"), BAD_URLS, ids=[u.split("@")[-1] for u, _ in BAD_URLS])
def test_bad_url_parts_are_one_line_exit_2(cli, url: str, needle: str) -> None:
    for args in (["streams", "--url", url], ["config", "show", "--url", url]):
        res = cli(*args)
        line = assert_one_error(res, 2, needle)
        assert "(from --url)" in line
        assert SECRET not in res.stderr + res.stdout
        assert "unexpected" not in line


def test_bad_url_from_the_environment_or_a_context_names_its_source(cli, tmp_path) -> None:
    url = f"redis://:{SECRET}@h:abc/0"
    line = assert_one_error(cli("streams", env={"PELCTL_URL": None, "REDIS_URL": url}), 2)
    assert line == "error: bad port 'abc' in redis://:***@h:abc/0 (from REDIS_URL)"
    config = tmp_path / "config" / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[contexts.prod]\nurl = "redis://:{SECRET}@h/0?socket_timeout=abc"\n')
    config.chmod(0o600)
    res = cli("streams", "--context", "prod", env={"PELCTL_URL": None})
    line = assert_one_error(res, 2, "socket_timeout", "(from context prod)")
    assert SECRET not in res.stderr


def test_good_url_parameters_pass(cli, redis_server) -> None:
    url = f"{redis_server.url}?socket_timeout=5&socket_connect_timeout=2.5&socket_keepalive=true"
    res = cli("streams", "-o", "json", "--url", url + "&health_check_interval=30&db=0")
    assert res.exit_code == 0, res.stderr
    res = cli("streams", "-o", "json", "--url", redis_server.url + "/")
    assert res.exit_code == 0, res.stderr


def test_a_password_in_the_query_is_a_secret_like_any_other(cli, redis_server) -> None:
    """``?password=`` is taken out of the URL (never shown, redacted from errors); the
    server here needs none, so redis-py's AUTH of it is refused: exit 4, redacted."""
    res = cli("streams", "--url", f"{redis_server.url}?password={SECRET}")
    assert res.exit_code == 4, res.stderr
    assert SECRET not in res.stderr + res.stdout
    shown = cli("config", "show", "-o", "json", "--url", f"{redis_server.url}?password={SECRET}")
    assert shown.json["url"] == redis_server.url and shown.json["password"] == "***"


# -- TLS verification off through the URL ----------------------------------------------------


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ("ssl_cert_reqs=none", "ssl_cert_reqs=none"),
        ("ssl_cert_reqs=optional", "ssl_cert_reqs=optional"),
        ("ssl_check_hostname=false", "ssl_check_hostname=false"),
        ("ssl_check_hostname=0&ssl_cert_reqs=required", "ssl_check_hostname=0"),
    ],
)
def test_tls_verification_off_in_the_url_warns_like_tls_insecure(
    cli, query: str, shown: str
) -> None:
    res = cli("config", "show", "-o", "json", "--url", f"rediss://h:6380/0?{query}")
    assert res.exit_code == 0, res.stderr
    assert res.stderr.splitlines() == [
        f"warning: TLS certificate verification is off ({shown} in the URL)"
    ]
    quiet = cli("config", "show", "--url", "rediss://h:6380/0?ssl_cert_reqs=required")
    assert quiet.exit_code == 0 and quiet.stderr == ""


# -- DLQ time bounds -------------------------------------------------------------------------


@pytest.fixture
def dlq(r):
    sc.add_entries(r, b"orders", 2)
    return fill(r, b"orders:dlq", b"orders", 3, start_ms=1_700_000_000_000)


OUT_OF_RANGE = ["99999999999999999999-0", "1-18446744073709551616", "18446744073709551616-0"]
DLQ_COMMANDS = [
    ["dlq", "list", "orders:dlq"],
    ["dlq", "stats", "orders:dlq"],
    ["dlq", "replay", "orders:dlq", "--dry-run"],
    ["dlq", "purge", "orders:dlq", "--dry-run"],
]


@pytest.mark.parametrize("bound", OUT_OF_RANGE)
@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("args", DLQ_COMMANDS, ids=lambda a: a[1])
def test_out_of_range_dlq_bounds_are_one_line_exit_2(cli, r, dlq, args, option, bound) -> None:
    before = snapshot(r)
    res = cli(*args, option, bound)
    assert_one_error(res, 2, "out of range")
    assert_unchanged(before, r)


def test_largest_id_and_far_times_are_fine(cli, dlq) -> None:
    top = "18446744073709551615-18446744073709551615"
    res = cli("dlq", "list", "orders:dlq", "--since", top, "-o", "json")
    assert (res.exit_code, res.json) == (0, [])
    res = cli("dlq", "list", "orders:dlq", "--until", top, "-o", "json")
    assert res.exit_code == 0 and len(res.json) == 3
    for when in ("9999-12-31T23:59:59-23:59", "0001-01-01T00:00+01:00"):
        res = cli("dlq", "stats", "orders:dlq", "--since", when, "-o", "json")
        assert res.exit_code == 0, res.stderr
    assert_one_error(cli("dlq", "list", "orders:dlq", "--since", "2025-13-01"), 2, "invalid time")


# -- empty names and prefixes ----------------------------------------------------------------

# Mutating commands get --yes (not that they get as far as asking).
EMPTY = [
    (["claim", "s", "g", "--to", "", "--idle", "1m", "--yes"], "--to is empty"),
    (["claim", "s", "g", "--to", "c2", "--consumer", "", "--yes"], "--consumer is empty"),
    (["claim", "s", "g", "--to", "c2", "--from", "", "--yes"], "--consumer is empty"),
    (["ack", "s", "g", "-c", "", "--yes"], "--consumer is empty"),
    (["requeue", "s", "g", "--consumer", "", "--yes"], "--consumer is empty"),
    (["dlq", "move", "s", "g", "--consumer", "", "--yes"], "--consumer is empty"),
    (["ghosts", "s", "g", "--fix", "--consumer", "", "--yes"], "--consumer is empty"),
    (["ghosts", "s", "g", "--consumer", ""], "--consumer is empty"),
    (["pending", "s", "g", "--consumer", ""], "--consumer is empty"),
    (
        ["consumers", "prune", "s", "g", "--inactive", "1m", "--reassign-to", "", "--yes"],
        "--reassign-to is empty",
    ),
    (
        ["reclaim", "s", "-g", "g", "--idle", "30s", "--once", "--strategy", "claim", "--to", ""],
        "--to is empty",
    ),
    (
        [
            "reclaim",
            "s",
            "-g",
            "g",
            "--idle",
            "30s",
            "--once",
            "--strategy",
            "autoclaim",
            "--to",
            "",
        ],
        "--to is empty",
    ),
    (["reclaim", "s", "-g", "", "--idle", "30s", "--once"], "--group is empty"),
    (["claim", "s", "g", "--to", "c2", "--lock-key", "", "--yes"], "--lock-key is empty"),
    (["ack", "s", "g", "--idle", "1m", "--lock-key", "", "--yes"], "--lock-key is empty"),
    (["requeue", "s", "g", "--idle", "1m", "--lock-key", "", "--yes"], "--lock-key is empty"),
    (["dlq", "move", "s", "g", "--idle", "1m", "--lock-key", "", "--yes"], "--lock-key is empty"),
    (
        ["reclaim", "s", "-g", "g", "--idle", "30s", "--once", "--lock-key", ""],
        "--lock-key is empty",
    ),
    (["requeue", "s", "g", "--max-retries", "2", "--dlq", "", "--yes"], "--dlq is empty"),
    (["dlq", "move", "s", "g", "--idle", "1m", "--dlq", "", "--yes"], "--dlq is empty"),
    (["reclaim", "s", "-g", "g", "--idle", "30s", "--once", "--dlq", ""], "--dlq is empty"),
    (["dlq", "replay", "s:dlq", "--to", "", "--yes"], "--to is empty"),
    (["requeue", "s", "g", "--field-prefix", "", "--yes"], "--field-prefix cannot be empty"),
    (["dlq", "move", "s", "g", "--field-prefix", "", "--yes"], "--field-prefix cannot be empty"),
    (["dlq", "list", "s:dlq", "--field-prefix", ""], "--field-prefix cannot be empty"),
    (["dlq", "show", "s:dlq", "1-0", "--field-prefix", ""], "--field-prefix cannot be empty"),
    (["dlq", "stats", "--field-prefix", ""], "--field-prefix cannot be empty"),
    (["dlq", "replay", "s:dlq", "--field-prefix", "", "--yes"], "--field-prefix cannot be empty"),
    (
        ["dlq", "purge", "s:dlq", "--all", "--field-prefix", "", "--yes"],
        "--field-prefix cannot be empty",
    ),
    (
        ["reclaim", "s", "-g", "g", "--idle", "30s", "--once", "--field-prefix", ""],
        "--field-prefix cannot be empty",
    ),
]


@pytest.mark.parametrize(("args", "needle"), EMPTY, ids=[" ".join(a) for a, _ in EMPTY])
def test_empty_names_and_prefixes_are_refused_before_connecting(cli, args, needle) -> None:
    res = cli(*args, "--url", closed_url())
    line = assert_one_error(res, 2, needle)
    assert "cannot connect" not in res.stderr, line


def test_empty_consumer_filter_never_widens_a_repair(cli, r) -> None:
    """On main ``--consumer ''`` was read as no filter: every consumer's entries matched."""
    sc.add_entries(r, b"s", 6)
    sc.create_group(r, b"s", b"g")
    for consumer in (b"c1", b"c2"):
        ids = sc.deliver(r, b"s", b"g", consumer, 3)
        sc.set_idle(r, b"s", b"g", consumer, ids, HOUR)
    assert r.xpending(b"s", b"g")["pending"] == 6
    before = snapshot(r)
    res = cli("ack", "s", "g", "--consumer", "", "--idle", "1m", "--yes")
    assert_one_error(res, 2, "--consumer is empty")
    assert_unchanged(before, r)
