"""Global options, output formats, colours, config-file contexts and `version`."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from pelctl import __version__
from pelctl.demo import scenario as sc
from pelctl.demo.server import free_port
from tests.cli.conftest import PASSWORD

COLOR = re.compile(r"\x1b\[(?:\d+;)*(?:3[0-7]|9[0-7]|38;[25];[\d;]+)m")
HOUR = 3_600_000


@pytest.fixture
def data(r) -> None:
    """Two streams; group g of s holds 150 entries, 20 of them idle for 2 hours."""
    sc.add_entries(r, b"s", 200, {b"k": b"v"})
    sc.create_group(r, b"s", b"g")
    sc.create_group(r, b"s", b"other")
    ids = sc.deliver(r, b"s", b"g", b"c1", 150)
    sc.set_idle(r, b"s", b"g", b"c2", ids[:20], 2 * HOUR, 6)
    sc.add_entries(r, b"t", 3)


def config_file(tmp_path, text: str, mode: int = 0o600):
    path = tmp_path / "config" / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def stable(records: list[dict]) -> list[dict]:
    """Records without the values that grow with the clock."""
    return [{k: v for k, v in rec.items() if k not in TIME_KEYS} for rec in records]


TIME_KEYS = {"oldest_pending_age_ms", "idle_ms"}
NO_URL_ENV = {"PELCTL_URL": None}  # the cli fixture presets PELCTL_URL; None removes it


# -- output formats -----------------------------------------------------------------------


def test_streams_formats(data, cli) -> None:
    records = cli("streams", "-o", "json").json
    assert [d["stream"] for d in records] == ["s", "t"]
    assert records[0]["length"] == 200 and records[0]["group_count"] == 2
    assert records[0]["pending"] == 150

    assert stable(cli("streams", "-o", "ndjson").ndjson) == stable(records)

    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        out = cli("streams", "-o", fmt).stdout
        rows = list(csv.DictReader(io.StringIO(out), delimiter=delimiter))
        assert list(rows[0]) == list(records[0])
        assert rows[1]["oldest_pending_age_ms"] == ""
        assert [row["stream"] for row in rows] == ["s", "t"]
        assert rows[0]["pending"] == "150" and rows[0]["is_dlq"] == "false"
        assert rows[1]["lag"] == ""  # null is an empty cell

    md = cli("streams", "-o", "markdown").stdout.splitlines()
    assert md[0].startswith("| STREAM") and md[0].endswith("|")
    assert set(md[1]) <= set("|-: ")
    assert md[2].startswith("| s ") and "150" in md[2]

    plain = cli("streams", "-o", "plain").stdout.splitlines()
    assert plain[0].split()[:4] == ["STREAM", "LENGTH", "GROUPS", "PENDING"]
    assert plain[1].split()[:4] == ["s", "200", "2", "150"]
    assert "|" not in "".join(plain)

    table = cli("streams", "-o", "table").stdout
    assert "STREAM" in table and "PENDING" in table and "150" in table


def test_pending_formats(data, cli) -> None:
    records = cli("pending", "s", "g", "-n", "30", "-o", "ndjson").ndjson
    assert len(records) == 30
    assert stable(cli("pending", "s", "g", "-n", "30", "-o", "json").json) == stable(records)

    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        out = cli("pending", "s", "g", "-n", "30", "-o", fmt).stdout
        rows = list(csv.DictReader(io.StringIO(out), delimiter=delimiter))
        assert list(rows[0]) == ["id", "consumer", "idle_ms", "deliveries"]
        assert [row["id"] for row in rows] == [rec["id"] for rec in records]
        assert [int(row["deliveries"]) for row in rows] == [rec["deliveries"] for rec in records]

    md = cli("pending", "s", "g", "-n", "30", "-o", "markdown").stdout.splitlines()
    assert md[0].startswith("| ID") and "DELIVERIES" in md[0]
    assert set(md[1]) <= set("|-: ")
    assert len(md) == 32 and md[2].startswith(f"| {records[0]['id']}")

    plain = cli("pending", "s", "g", "-n", "30", "-o", "plain").stdout.splitlines()
    assert plain[0].split() == ["ID", "CONSUMER", "IDLE", "DELIVERIES"]
    assert plain[1].split() == [records[0]["id"], "c2", "2h00m", "6"]
    assert len(plain) == 31

    table = cli("pending", "s", "g", "-n", "30", "-o", "table").stdout
    assert "DELIVERIES" in table and records[0]["id"] in table


def test_pending_with_payload_formats(data, cli) -> None:
    rows = list(
        csv.DictReader(
            io.StringIO(cli("pending", "s", "g", "-n", "2", "--with-payload", "-o", "csv").stdout)
        )
    )
    assert list(rows[0])[:5] == ["id", "consumer", "idle_ms", "deliveries", "fields"]
    assert json.loads(rows[0]["fields"]) == {"k": "v"}
    plain = cli("pending", "s", "g", "-n", "2", "--with-payload", "-o", "plain").stdout
    assert "FIELDS" in plain and "k=v" in plain


def test_empty_results(r, cli) -> None:
    assert cli("streams", "-o", "json").json == []
    assert cli("streams", "-o", "ndjson").stdout == ""
    assert "no streams found" in cli("streams", "-o", "plain").stdout
    sc.create_group(r, b"e", b"g")
    assert cli("pending", "e", "g", "-o", "json").json == []
    assert cli("pending", "e", "g", "-o", "ndjson").stdout == ""


def test_pipe_defaults(data, cli) -> None:
    """Not a terminal: streams prints a plain table, pending NDJSON."""
    piped, plain = cli("streams").stdout.splitlines(), cli("streams", "-o", "plain").stdout
    assert piped[0] == plain.splitlines()[0] and piped[0].startswith("STREAM")
    assert [line.split()[:4] for line in piped] == [line.split()[:4] for line in plain.splitlines()]
    rows = cli("pending", "s", "g").ndjson
    assert len(rows) == 100 and set(rows[0]) == {"id", "consumer", "idle_ms", "deliveries"}


def test_truncation_note_only_for_humans(data, cli) -> None:
    res = cli("pending", "s", "g", "-o", "plain")
    assert (
        res.stderr.strip() == "showing 100 of 150 pending (before filters); use --limit N or --all"
    )
    assert len(res.stdout.splitlines()) == 101
    assert cli("pending", "s", "g", "-o", "ndjson").stderr == ""
    assert cli("pending", "s", "g", "--all", "-o", "plain").stderr == ""


def test_output_format_is_case_insensitive_and_checked(data, cli) -> None:
    assert stable(cli("streams", "-o", "JSON").json) == stable(cli("streams", "-o", "json").json)
    res = cli("streams", "-o", "yaml")
    assert res.exit_code == 2
    assert "Traceback" not in res.stderr


# -- global options before and after the subcommand ---------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (["-o", "json", "streams"], ["streams", "-o", "json"]),
        (["--output", "csv", "pending", "s", "g"], ["pending", "s", "g", "--output", "csv"]),
        (
            ["--no-color", "-o", "ndjson", "inspect", "s"],
            ["inspect", "s", "-o", "ndjson", "--no-color"],
        ),
        (["-o", "json", "config", "show"], ["config", "show", "-o", "json"]),
    ],
)
def test_global_options_before_or_after(data, cli, before, after) -> None:
    a, b = cli(*before), cli(*after)
    assert a.exit_code == b.exit_code == 0, (a.stderr, b.stderr)
    if before[-1] == "s":  # inspect: idle times move; compare the shape
        assert json.loads(a.stdout).keys() == json.loads(b.stdout).keys()
    elif before[0] == "--output":  # pending: idle times move; compare ids
        assert [row[0] for row in csv.reader(io.StringIO(a.stdout))] == [
            row[0] for row in csv.reader(io.StringIO(b.stdout))
        ]
    elif before[-1] == "streams":
        assert stable(json.loads(a.stdout)) == stable(json.loads(b.stdout))
    else:
        assert a.stdout == b.stdout


def test_url_before_subcommand(data, cli, redis_server) -> None:
    res = cli("--url", redis_server.url, "streams", "-o", "json", env=NO_URL_ENV)
    assert res.exit_code == 0, res.stderr
    assert [d["stream"] for d in res.json] == ["s", "t"]
    # The value on the command wins over the one before it.
    closed = f"redis://127.0.0.1:{free_port()}/0"
    assert cli("--url", closed, "streams", "--url", redis_server.url).exit_code == 0
    assert cli("--url", redis_server.url, "streams", "--url", closed).exit_code == 4
    assert cli("-o", "csv", "streams", "-o", "json").json[0]["stream"] == "s"


def test_verbose_before_subcommand(cli) -> None:
    res = cli("-v", "inspect", "s", "--url", f"redis://127.0.0.1:{free_port()}/0")
    assert res.exit_code == 4
    assert "Traceback" in res.stderr  # -v shows it
    assert res.stderr.rstrip().splitlines()[-2].startswith("error: ")


# -- colours ------------------------------------------------------------------------------


@pytest.fixture
def colourful(data, r) -> None:
    """A consumer quiet for 2h (on Redis 7.0 its liveness is unknown), so inspect has
    coloured rows."""
    from pelctl.demo.timeshift import backdate_consumers

    backdate_consumers(r, b"s", {b"c2": 2 * HOUR})


@pytest.mark.parametrize("args", [["streams"], ["pending", "s", "g"], ["inspect", "s"]])
def test_no_color(colourful, cli, args) -> None:
    force = {"FORCE_COLOR": "1"}  # rich colours even without a terminal
    coloured = cli(*args, "-o", "table", env=force)
    assert coloured.exit_code == 0, coloured.stderr
    assert COLOR.search(coloured.stdout), coloured.stdout
    for res in (
        cli(*args, "-o", "table", env={**force, "NO_COLOR": "1"}),
        cli(*args, "-o", "table", "--no-color", env=force),
        cli("--no-color", *args, "-o", "table", env=force),
    ):
        assert res.exit_code == 0, res.stderr
        assert not COLOR.search(res.stdout), res.stdout
        assert len(res.stdout.splitlines()) == len(coloured.stdout.splitlines())


def test_empty_no_color_is_ignored(colourful, cli) -> None:
    res = cli("pending", "s", "g", "-o", "table", env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert COLOR.search(res.stdout)


def test_machine_formats_never_coloured(colourful, cli) -> None:
    for fmt in ("json", "ndjson", "csv", "tsv", "plain", "markdown"):
        res = cli("pending", "s", "g", "-o", fmt, env={"FORCE_COLOR": "1"})
        assert "\x1b[" not in res.stdout, fmt


# -- config file and contexts -------------------------------------------------------------


def show(cli, *args: str, env: dict | None = None) -> dict:
    res = cli("config", "show", "-o", "json", *args, env={**NO_URL_ENV, **(env or {})})
    assert res.exit_code == 0, res.stderr
    return res.json


def test_config_path(cli, tmp_path) -> None:
    res = cli("config", "path")
    assert res.stdout.strip() == str(tmp_path / "config" / "pelctl" / "config.toml")
    res = cli("config", "path", env={"PELCTL_CONFIG": str(tmp_path / "elsewhere.toml")})
    assert res.stdout.strip() == str(tmp_path / "elsewhere.toml")


def test_default_settings(cli) -> None:
    info = show(cli)
    assert info["url"] == "redis://localhost:6379/0"
    assert info["url_source"] == "default"
    assert info["context"] is None and info["password"] is None
    assert info["config_exists"] is False


TWO_CONTEXTS = """
current-context = "dev"

[contexts.dev]
url = "{dev_url}"
group = "g"
description = "the session server"

[contexts.prod]
url = "redis://prod.internal:6380/2"
username = "ops"
read_only = true
"""


@pytest.fixture
def contexts(tmp_path, redis_server):
    return config_file(tmp_path, TWO_CONTEXTS.format(dev_url=redis_server.url))


def test_precedence_flag_env_context_default(contexts, cli, redis_server) -> None:
    assert show(cli)["url"] == redis_server.url  # current-context
    assert show(cli)["url_source"] == "context dev"
    prod = show(cli, env={"PELCTL_CONTEXT": "prod"})  # env picks another context
    assert (prod["context"], prod["url"], prod["username"]) == (
        "prod",
        "redis://prod.internal:6380/2",
        "ops",
    )
    assert prod["read_only"] is True
    # --context beats PELCTL_CONTEXT
    assert show(cli, "--context", "dev", env={"PELCTL_CONTEXT": "prod"})["context"] == "dev"
    # An environment URL beats the context's URL; a flag beats both.
    env_url = show(cli, env={"REDIS_URL": "redis://from-redis-url:1/0"})
    assert (env_url["url"], env_url["url_source"]) == ("redis://from-redis-url:1/0", "REDIS_URL")
    both = show(cli, env={"REDIS_URL": "redis://a:1/0", "PELCTL_URL": "redis://b:1/0"})
    assert (both["url"], both["url_source"]) == ("redis://b:1/0", "PELCTL_URL")
    flag = show(cli, "--url", "redis://c:1/0", env={"PELCTL_URL": "redis://b:1/0"})
    assert (flag["url"], flag["url_source"]) == ("redis://c:1/0", "--url")
    # With a URL from elsewhere the context still gives read-only and its default group,
    # never its credentials (user, password, TLS): they belong to the context's own URL.
    mixed = show(cli, "--url", "redis://c:1/0", "--context", "prod")
    assert (mixed["username"], mixed["read_only"]) == (None, True)


def test_context_connects(contexts, cli) -> None:
    data_free = cli("streams", "-o", "json", env=NO_URL_ENV)
    assert data_free.exit_code == 0, data_free.stderr
    res = cli("streams", "--context", "prod", env=NO_URL_ENV)  # unreachable host
    assert res.exit_code == 4


def test_context_default_group_for_inspect(contexts, data, cli) -> None:
    """The context's group applies however the context was chosen."""
    for extra, env in (([], {}), (["--context", "dev"], {}), ([], {"PELCTL_CONTEXT": "dev"})):
        doc = cli("inspect", "s", "-o", "json", *extra, env={**NO_URL_ENV, **env}).json
        assert [g["group"] for g in doc["groups"]] == ["g"], (extra, env)
    doc = cli("inspect", "s", "-g", "other", "-o", "json", env=NO_URL_ENV).json
    assert [g["group"] for g in doc["groups"]] == ["other"]


def test_unknown_context(contexts, cli) -> None:
    for res in (
        cli("streams", "--context", "staging"),
        cli("streams", env={"PELCTL_CONTEXT": "staging"}),
    ):
        assert res.exit_code == 2
        assert res.stderr.splitlines() == [
            f"error: no context named 'staging' in {contexts}",
            "hint: known contexts: dev, prod",
        ]


def test_unknown_current_context(tmp_path, cli) -> None:
    config_file(tmp_path, 'current-context = "gone"\n')
    res = cli("streams")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: no context named 'gone'")


def test_config_contexts(contexts, cli, redis_server) -> None:
    records = cli("config", "contexts", "-o", "json").json
    assert [(c["context"], c["current"], c["url"], c["read_only"]) for c in records] == [
        ("dev", True, redis_server.url, False),
        ("prod", False, "redis://prod.internal:6380/2", True),
    ]
    plain = cli("config", "contexts", "-o", "plain").stdout
    assert "dev" in plain and "prod" in plain and "*" in plain


def test_config_show_redacts(tmp_path, cli) -> None:
    config_file(tmp_path, f'[contexts.x]\nurl = "redis://ops:{PASSWORD}@h:1/0"\n')
    for args in (["-o", "json"], ["-o", "plain"], ["-o", "table"]):
        res = cli("config", "show", "--context", "x", *args, env=NO_URL_ENV)
        assert res.exit_code == 0, res.stderr
        assert PASSWORD not in res.stdout + res.stderr
        assert "***" in res.stdout
    info = show(cli, "--context", "x")
    assert (info["url"], info["username"], info["password"]) == ("redis://h:1/0", "ops", "***")
    res = cli("config", "contexts", "-o", "json")
    assert PASSWORD not in res.stdout + res.stderr
    assert res.json[0]["url"] == "redis://ops:***@h:1/0"
    env = cli("config", "show", "-o", "json", env={"PELCTL_URL": f"redis://:{PASSWORD}@h:2/0"})
    assert PASSWORD not in env.stdout + env.stderr
    assert env.json["password"] == "***"


@pytest.mark.parametrize(
    ("text", "mode", "warns"),
    [
        ('[contexts.x]\nurl = "redis://h"\npassword = "pw-in-file"\n', 0o644, True),
        ('[contexts.x]\nurl = "redis://:pw-in-file@h"\n', 0o640, True),
        ('[contexts.x]\nurl = "redis://h"\npassword = "pw-in-file"\n', 0o600, False),
        ('[contexts.x]\nurl = "redis://h"\npassword_env = "SOME_VAR"\n', 0o644, False),
    ],
)
def test_world_readable_config_with_password_warns(tmp_path, cli, text, mode, warns) -> None:
    path = config_file(tmp_path, text, mode)
    for command in (["config", "show", "--context", "x"], ["config", "contexts"]):
        res = cli(*command, env=NO_URL_ENV)
        assert res.exit_code == 0, res.stderr
        warning = (
            f"warning: {path} holds a password and is readable by others; run: chmod 600 {path}"
        )
        assert (warning in res.stderr.splitlines()) is warns, res.stderr
        assert "pw-in-file" not in res.stdout + res.stderr


# -- passwords from the environment and contexts (a server that needs one) ----------------


def test_rediscli_auth(secured, cli) -> None:
    ok = cli("streams", "-o", "json", env={"PELCTL_URL": secured.url, "REDISCLI_AUTH": PASSWORD})
    assert ok.exit_code == 0, ok.stderr
    assert [s["stream"] for s in ok.json] == ["s"]
    assert cli("streams", env={"PELCTL_URL": secured.url}).exit_code == 4


def test_password_env_and_precedence(secured, tmp_path, cli) -> None:
    config_file(
        tmp_path,
        f"""
[contexts.sec]
url = "{secured.url}"
password_env = "SEC_PW"

[contexts.inline]
url = "{secured.url}"
password = "{PASSWORD}"
""",
    )
    assert cli("streams", "--context", "sec", env={**NO_URL_ENV, "SEC_PW": PASSWORD}).exit_code == 0
    assert cli("streams", "--context", "sec", env={**NO_URL_ENV, "SEC_PW": "nope"}).exit_code == 4
    assert cli("streams", "--context", "sec", env=NO_URL_ENV).exit_code == 4
    assert cli("streams", "--context", "inline", env=NO_URL_ENV).exit_code == 0
    # environment (REDISCLI_AUTH) > context; URL password (flag) > environment
    wrong_env = {**NO_URL_ENV, "REDISCLI_AUTH": "wrong"}
    assert cli("streams", "--context", "inline", env=wrong_env).exit_code == 4
    url = f"redis://:{PASSWORD}@127.0.0.1:{secured.port}/0"
    assert cli("streams", "--context", "inline", "--url", url, env=wrong_env).exit_code == 0


def test_client_name_is_set(conn, redis_server) -> None:
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings

    c = connect(ConnectionSettings(url=redis_server.url).with_client_name("inspect"))
    try:
        name = f"pelctl:{__version__}:inspect"
        assert c.raw().execute_command("CLIENT", "GETNAME") == name.encode()
    finally:
        c.close()


# -- version ------------------------------------------------------------------------------


def test_version_flag_and_command(cli) -> None:
    res = cli("--version")
    assert (res.exit_code, res.stdout) == (0, f"pelctl {__version__}\n")
    doc = cli("version", "-o", "json").json
    assert doc["pelctl"] == __version__
    assert set(doc) >= {"pelctl", "python", "redis-py", "hiredis"}
    plain = cli("version").stdout
    assert plain.splitlines()[0].split() == ["pelctl:", __version__]


def test_version_needs_no_server(cli) -> None:
    res = cli("version", "-o", "json", env={"PELCTL_URL": f"redis://127.0.0.1:{free_port()}/0"})
    assert res.exit_code == 0


def test_version_server_features(r, cli, redis_server) -> None:
    info = r.info("server")
    version = tuple(int(p) for p in info["redis_version"].split(".")[:2])
    res = cli("version", "--server", "-o", "json")
    assert res.exit_code == 0, res.stderr
    server = res.json
    assert server["server_version"] == f"redis {info['redis_version']}"
    assert server["server"] == redis_server.url
    assert server["cluster"] is False
    minimum = {
        "xautoclaim": (6, 2),
        "xpending_idle": (6, 2),
        "xinfo_lag": (7, 0),
        "xclaim_drops_deleted": (7, 0),
        "consumer_inactive": (7, 2),
        "xackdel": (8, 2),
        "xreadgroup_claim": (8, 4),
        "idmp": (8, 6),
    }
    assert server["features"] == {name: version >= v for name, v in minimum.items()}
    text = cli("version", "--server", "-o", "plain").stdout
    assert f"redis {info['redis_version']} at {redis_server.url}" in text


def test_context_paths_expand_home(tmp_path, cli, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config_file(tmp_path, '[contexts.t]\nurl = "rediss://h:6380"\ntls_ca = "~/ca.pem"\n')
    info = show(cli, "--context", "t")
    assert info["tls_ca"] == str(tmp_path / "home" / "ca.pem")
