"""``--max-server-share``: what pelctl's polling may use of the server's time, set like every
other setting (flag > ``PELCTL_MAX_SERVER_SHARE`` > the context's ``max_server_share`` > 5%),
and refused in one line when it makes no sense (docs/server-budget.md)."""

from __future__ import annotations

import pytest

from pelctl.base.errors import ConfigError, UsageError
from pelctl.base.shares import format_share, parse_share
from pelctl.config import load_config, resolve_settings
from tests.cli.test_options import NO_URL_ENV, config_file, show

CONTEXTS = """
current-context = "dev"

[contexts.dev]
url = "{url}"

[contexts.incident]
url = "{url}"
max_server_share = "20%"

[contexts.fraction]
url = "{url}"
max_server_share = 0.02
"""


@pytest.fixture
def contexts(tmp_path, redis_server):
    return config_file(tmp_path, CONTEXTS.format(url=redis_server.url))


@pytest.mark.parametrize(
    ("text", "share"),
    [("5%", 0.05), ("0.05", 0.05), ("12.5 %", 0.125), ("100%", 1.0), ("1", 1.0), ("0.01%", 0.0001)],
)
def test_a_share_is_a_percentage_or_a_fraction(text: str, share: float) -> None:
    assert parse_share(text) == share


@pytest.mark.parametrize("text", ["5", "150%", "0", "-1%", "0.001%", "five", "", "nan", "inf%"])
def test_a_share_that_makes_no_sense_is_refused(text: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_share(text)
    assert "--max-server-share" in err.value.message and err.value.hint


def test_shares_are_printed_as_people_write_them() -> None:
    assert [format_share(x) for x in (0.05, 0.125, 0.0005, 1.0, 0.031)] == [
        "5%",
        "12.5%",
        "0.05%",
        "100%",
        "3.1%",
    ]


def test_flag_beats_environment_beats_context_beats_default(contexts) -> None:
    config = load_config(contexts)

    def share(flag: str | None = None, env: dict[str, str] | None = None, ctx=None) -> float:
        return resolve_settings(
            context=ctx, max_server_share=flag, env=env or {}, config=config
        ).max_server_share

    assert share() == 0.05  # the current context sets nothing: the default
    assert share(ctx="incident") == 0.2
    assert share(ctx="fraction") == 0.02
    assert share(ctx="incident", env={"PELCTL_MAX_SERVER_SHARE": "1%"}) == 0.01
    assert share("30%", env={"PELCTL_MAX_SERVER_SHARE": "1%"}, ctx="incident") == 0.3
    # Not a secret: a context gives it even when the URL comes from elsewhere.
    other = resolve_settings(url="redis://elsewhere:1/0", context="incident", env={}, config=config)
    assert other.max_server_share == 0.2


def test_config_show_says_which_share_applies(contexts, cli) -> None:
    assert show(cli)["max_server_share"] == 0.05
    assert show(cli, "--context", "incident")["max_server_share"] == 0.2
    env = {"PELCTL_MAX_SERVER_SHARE": "50%"}
    assert show(cli, "--context", "incident", env=env)["max_server_share"] == 0.5


def test_bad_values_are_one_line_and_exit_2(contexts, tmp_path, cli) -> None:
    res = cli("inspect", "s", "--watch", "--max-server-share", "5", env=NO_URL_ENV)
    assert res.exit_code == 2 and "ambiguous" in res.stderr and "Traceback" not in res.stderr
    res = cli("streams", "--max-server-share", "5%", env=NO_URL_ENV)
    assert res.exit_code == 2 and "go with --watch" in res.stderr
    res = cli("streams", "--watch", env={**NO_URL_ENV, "PELCTL_MAX_SERVER_SHARE": "lots"})
    assert res.exit_code == 2 and "PELCTL_MAX_SERVER_SHARE" in res.stderr
    config_file(tmp_path, '[contexts.x]\nurl = "redis://h:1/0"\nmax_server_share = true\n')
    with pytest.raises(ConfigError):
        load_config(tmp_path / "config" / "pelctl" / "config.toml")
    res = cli("config", "show", "--context", "x")
    assert res.exit_code == 2 and "max_server_share" in res.stderr
