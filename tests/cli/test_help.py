"""Help that reads at 80 columns: a command's own options first, the shared ones by name in
one compact "Global options" panel (what they do: `pelctl --help`), no <bool>/<str> type
noise; the shared options still work before and after the command."""

from __future__ import annotations

import re
from collections.abc import Iterator
from unittest import mock

import pytest

from tests.conftest import CliResult

# 85 lines on main (the shared options in full, one to three lines each). What is left is
# inspect's own: its description, GROUP and -g, --oldest, and the long --dead-after and
# --lock-key help (13 lines between them), then the three-line Global options panel; the
# Watch panel's --max-server-share (the frames' share of the server's time) adds three.
MAX_INSPECT_LINES = 51
NOISE = re.compile(r"<(?:bool|str|int|float|int range|float range|path|list\[[a-z]+\])>")


def help_of(*path: str, width: int = 80) -> CliResult:
    import typer.testing
    from typer.testing import CliRunner

    from pelctl.cli.app import app
    from tests.conftest import _cached_command

    with mock.patch.object(typer.testing, "_get_command", _cached_command):
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res.output
    return CliResult(res.exit_code, res.stdout, res.stderr)


def _commands() -> Iterator[tuple[str, ...]]:
    from tests.conftest import _built_command

    def walk(cmd, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        yield path
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, (*path, name))

    yield from walk(_built_command(), ())


def test_inspect_help_is_short_and_lists_its_own_options_first() -> None:
    text = help_of("inspect").stdout
    lines = text.splitlines()
    assert len(lines) <= MAX_INSPECT_LINES, f"{len(lines)} lines:\n{text}"
    assert all(len(line) <= 80 for line in lines)
    at = {name: text.index(name) for name in ("--group", "--oldest", "--dead-after")}
    panel = text.index("Global options")
    assert max(at.values()) < panel
    assert "pelctl --help" in lines[next(i for i, x in enumerate(lines) if "Global options" in x)]
    globals_ = text[panel:]
    for option in (
        "--url URL",
        "--context NAME",
        "--askpass",
        "--tls-ca FILE",
        "--tls-cert FILE",
        "--tls-key FILE",
        "--tls-insecure",
        "--cluster/--no-cluster",
        "-o, --output FORMAT",
        "--no-color",
        "-v, --verbose",
        "--read-only",
    ):
        assert option in globals_, option
    # By name, in columns: three lines between the two borders at 80 columns.
    assert [x[:1] for x in globals_.strip().splitlines()] == ["G", "│", "│", "│", "╰"]
    # What they do is in `pelctl --help`, not repeated on every command.
    assert "Put no password here" not in text and "Connection" not in text


def _description(text: str) -> list[str]:
    """The help's prose: between the usage line and the first panel."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if "Usage:" in x) + 1
    end = next(i for i, x in enumerate(lines) if x.startswith("╭"))
    return [x.strip() for x in lines[start:end]]


def test_descriptions_are_reflowed_to_the_terminal() -> None:
    # Docstrings are wrapped at 88 in the source; rich help kept those breaks, leaving a
    # word alone on a line at 80 columns ("the", "on", "payload").
    for path in _commands():
        prose = _description(help_of(*path).stdout)
        alone = [
            x
            for i, x in enumerate(prose)
            if len(x.split()) == 1 and i + 1 < len(prose) and prose[i + 1]
        ]
        assert not alone, f"pelctl {' '.join(path)} --help: {alone}"
    prose = _description(help_of("inspect").stdout)
    # Its labelled lines still start lines of their own.
    for label in ("Groups:", "Consumers:", "Per group:", "Advice:"):
        assert any(x.startswith(label) for x in prose), label
    assert "verdict (active / idle / dead-suspect /" in "\n".join(prose)
    assert any(x.startswith("unknown) and its reason.") for x in prose)


def test_root_help_keeps_the_full_help_of_the_shared_options() -> None:
    text = help_of(width=200).stdout
    assert "Put no password here on shared machines" in text
    for panel in ("Connection", "Output", "Safety"):
        assert panel in text
    assert "Global options" not in text


def test_mutating_commands_show_their_safety_options_in_full() -> None:
    text = help_of("requeue").stdout
    safety = text.index("Safety")
    assert safety < text.index("Global options")
    for option in ("--dry-run", "--yes", "--all-rows", "--plan-out"):
        assert safety < text.index(option) < text.index("Global options"), option


@pytest.mark.parametrize("width", [80, 120])
def test_no_type_noise_in_any_help(width: int) -> None:
    for path in _commands():
        text = help_of(*path, width=width).stdout
        assert not NOISE.search(text), f"pelctl {' '.join(path)} --help: {NOISE.search(text)}"


def test_value_options_are_named_and_choices_listed() -> None:
    text = help_of("histogram").stdout
    assert re.search(r"--by\s+idle\|deliveries\|consumer", text)
    assert re.search(r"--max-server-ms\s+FLOAT\s+Bound", text)
    # A range goes with the help, not in the type column (which would squeeze the help).
    assert re.search(r"--top\s+INTEGER\s+--by consumer", text)
    assert "(x>=1)" in text


@pytest.mark.parametrize(
    "args",
    [
        ("-o", "json", "--url", "{url}", "streams"),
        ("streams", "-o", "json", "--url", "{url}"),
        ("--url", "{url}", "streams", "-o", "json"),
    ],
)
def test_shared_options_work_before_and_after_the_command(cli, redis_server, r, args) -> None:
    r.xadd("s", {"f": "v"})
    res = cli(*(a.format(url=redis_server.url) for a in args), env={"PELCTL_URL": ""})
    assert res.exit_code == 0, res.stderr
    assert [s["stream"] for s in res.json] == ["s"]
