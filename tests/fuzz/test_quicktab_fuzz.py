"""The typer-free name TAB (pelctl/cli/quicktab.py), fuzzed against the typer path.

Command lines are generated from the generated command table (pelctl/cli/_words.py): a
command path with a random mix of its options, its groups' and the root's option spellings
(values: live names, odd words, words starting with ``-``, ``--opt=value``, quoted words
with spaces, ``--``), flags, ``-v``/``-vv``, 0..4 positional words and a final partial word,
in bash, zsh and fish. Whenever :func:`quicktab.answer` answers, it prints exactly what the
typer path prints (pelctl.cli.completion.shell_complete); when it does not, it prints
nothing. A second strategy, biased to the name positions, shows the fast path does answer
(the comparison is not vacuous). Both ask the session's real redis-server.
"""

from __future__ import annotations

import os
import shlex
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pelctl.cli import _words, quicktab
from pelctl.demo import scenario as sc
from tests.cli.test_quicktab import _fast_path, _server_url, _steady, _typer_path, names
from tests.fuzz.conftest import FUZZ, count

__all__ = ["_server_url", "names"]  # pytest fixtures, used by name below

SHELLS = ("bash", "zsh", "fish")
ROOT = _words.COMMANDS[()]
PATHS = sorted(_words.COMMANDS)
URL = "{url}"  # the session server's URL, filled in per test

LIVE = [
    "orders",
    "billing",
    "billing-1",
    "billing-2",
    "shipping",
    "orders:dlq",
    "with space",
    "glob*[name]",
    "local",
    "down",
    "group",
    "stream",
    "consumer",
    "to",
]
ODD = ["x", "5m", "1-0", "", "0", "*", "é", "a=b", "\\x00", "nosuch", "1-0 2-0", "a'b", "$x"]
DASHY = ["-", "-x", "-v", "--", "-1", "--group", "-g", "--help", "-h", "-vv", "--url"]
PARTIAL = [
    "",
    "o",
    "ord",
    "orders",
    "orders:",
    "b",
    "billing",
    "billing-",
    "s",
    "w",
    "with",
    "glob",
    "g",
    "l",
    "x",
    "-",
    "--",
    "--gr",
    "--group=b",
    "-g",
    "-v",
    "'with sp",
    '"ord',
    "'b",
    "with\\ ",
    "\\",
    "'",
    '"',
    "orders\\:d",
    "=",
    "o=",
    ":",
    "=o",
    "'='",
    "\\=",
]

# Contexts for --context: one on the session server (its default group billing), one down.
CONFIG = """\
[contexts.local]
url = "{url}"
group = "billing"
description = "the session server"

[contexts.down]
url = "redis://127.0.0.1:1/0"
"""


def _render(word: str, style: int) -> str:
    """A word as typed on the line: plain, single-quoted, double-quoted or backslashed."""
    if style == 1:
        return shlex.quote(word) if word else "''"
    if style == 2 and not any(c in word for c in '"\\$`!'):
        return f'"{word}"'
    if style == 3 and word:
        return "".join("\\" + c if c in " '\"\\*[]$" else c for c in word)
    return shlex.quote(word)


words = st.sampled_from(LIVE + ODD + DASHY + [URL])
rendered = st.builds(_render, words, st.integers(0, 3))


@st.composite
def option_items(draw, options: dict) -> list[str]:
    """One option spelling of ``options`` as typed: a flag, or with its value (a separate
    word or ``--opt=value``), or lacking it."""
    spelling = draw(st.sampled_from(sorted(options)))
    _name, nvalues, _flag, _multiple = options[spelling]
    if nvalues == 0:
        return [spelling]
    how = draw(st.integers(0, 9))
    if how == 0 and spelling.startswith("--"):
        return [f"{spelling}={draw(rendered)}"]
    return [spelling, draw(rendered)]


@st.composite
def random_lines(draw) -> str:
    """Anything the generated table can spell, and odd words among it."""
    path = draw(st.sampled_from(PATHS))
    tokens: list[str] = []
    for depth in range(len(path) + 1):
        here = _words.COMMANDS[path[:depth]][3]
        last = depth == len(path)
        spellings = {**ROOT[3], **here} if last else here
        items = draw(
            st.lists(
                st.one_of(
                    option_items(spellings),
                    st.sampled_from([["-v"], ["-vv"], ["--"]]),
                    rendered.map(lambda w: [w]),
                ),
                max_size=6 if last else 2,
            )
        )
        if not last:
            items = [i for i in items if not (i[0] and i[0][0] not in "-")]  # no stray words
        positional = sum(1 for i in items if len(i) == 1 and not i[0].startswith("-"))
        if positional > 4:
            items = items[:4]
        for item in items:
            tokens += item
        if not last:
            tokens.append(path[depth])
    tokens.append(draw(st.sampled_from(PARTIAL)))
    return " ".join(["pelctl", *tokens])


def _targets() -> list[tuple[tuple[str, ...], int | str]]:
    """Every name position: (command path, argument index or option spelling)."""
    out: list[tuple[tuple[str, ...], int | str]] = []
    for path, (is_group, _settings, _subs, options, arguments) in _words.COMMANDS.items():
        if is_group:
            continue
        for i, (name, nargs) in enumerate(arguments):
            if nargs != 1:
                break
            if quicktab.name_kind_of(path, name):
                out.append((path, i))
        for spelling, (name, nvalues, _flag, _multiple) in options.items():
            if nvalues == 1 and quicktab.name_kind_of(path, name) and name != "context":
                out.append((path, spelling))
    out.append(((), "--context"))
    return out


TARGETS = _targets()
GIVEN = {
    "stream": ["orders", "group"],
    "streams": ["orders"],
    "group": ["billing", "stream"],
    "group_opt": ["billing"],
    "consumer": ["billing-1", "consumer"],
    "dlq": ["orders:dlq"],
    "source": ["orders"],
}
SAFE_ROOT = [
    ["--no-color"],
    ["-v"],
    ["--verbose"],
    ["--cluster"],
    ["--no-cluster"],
    ["--url", URL],
    ["--context", "local"],
    ["--read-only"],
    ["-y"],
]


@st.composite
def name_lines(draw) -> str:
    """A valid line up to a name position, with a prefix of a name (or nothing) to complete."""
    path, target = draw(st.sampled_from(TARGETS))
    options, arguments = _words.COMMANDS[path][3], _words.COMMANDS[path][4]
    root = draw(st.lists(st.sampled_from(SAFE_ROOT), max_size=2))
    upto = target if isinstance(target, int) else draw(st.integers(0, len(arguments)))
    given_args = []
    for name, nargs in arguments[:upto]:
        if nargs != 1:
            break
        given_args.append(shlex.quote(draw(st.sampled_from(GIVEN.get(name, ["x"])))))
    if not isinstance(target, int):
        given_args = given_args[: max(0, len(arguments) - 1)]  # never every argument
    flags = [
        s
        for s, (_n, nv, fl, _m) in options.items()
        if nv == 0 and fl is not None and s not in _words.UNSURE
    ]
    extra = draw(st.lists(st.sampled_from(flags), max_size=2)) if flags else []
    tokens = [t for item in root for t in item] + list(path)
    mixed = given_args + extra
    order = draw(st.permutations(range(len(mixed)))) if extra else range(len(mixed))
    # the arguments keep their order; the flags go anywhere among them
    placed, args_iter = [], iter(given_args)
    for i in order:
        placed.append(next(args_iter) if i < len(given_args) else mixed[i])
    tokens += placed
    if not isinstance(target, int):
        tokens.append(target)
    partial = ["", "o", "b", "billing-", "s", "l", "ord", "'with sp", "g", "c"]
    tokens.append(draw(st.sampled_from(partial)))
    return " ".join(["pelctl", *tokens])


def _check(line: str, tally: Counter[str]) -> list[str]:
    """Both paths on ``line`` in every shell; the divergences."""
    wrong = []
    for shell in SHELLS:
        tally["lines"] += 1
        answered, fast = _fast_path(line, shell)
        if not answered:
            if fast:
                wrong.append(f"{shell} {line!r}: printed {fast!r} but left it to typer")
            continue
        tally["answered"] += 1
        tally["names"] += bool(fast)
        slow = _typer_path(line, shell)
        if _steady(fast) != _steady(slow):
            wrong.append(f"{shell} {line!r}: fast {fast!r} typer {slow!r}")
    return wrong


@pytest.fixture
def parameter_names(r) -> None:
    """Names that are parameters' names: besides the stream ``group`` of ``names`` (group
    billing, consumer ``consumer``), its group ``stream`` and a stream ``stream``."""
    sc.create_group(r, b"group", b"stream")
    sc.add_entries(r, b"stream", 1)


@pytest.fixture
def contexts(redis_server) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONFIG.format(url=redis_server.url))
    path.chmod(0o600)


def _fuzz(strategy, examples: int, label: str, url: str) -> Counter[str]:
    """Both paths on ``examples`` lines drawn from ``strategy``, in the three shells."""
    tally: Counter[str] = Counter()

    @FUZZ.__class__(FUZZ, max_examples=examples)
    @given(line=strategy)
    def prop(line: str) -> None:
        count(label)
        wrong = _check(line.replace(URL, url), tally)
        assert not wrong, "\n".join(wrong)

    prop()
    return tally


@pytest.mark.usefixtures("names", "parameter_names", "contexts")
def test_the_fast_path_answers_as_typer_on_any_line(redis_server) -> None:
    tally = _fuzz(random_lines(), 1500, "quicktab (any line, 3 shells)", redis_server.url)
    assert tally["lines"] >= 3 * 100


@pytest.mark.usefixtures("names", "parameter_names", "contexts")
def test_the_fast_path_answers_as_typer_at_name_positions(redis_server) -> None:
    tally = _fuzz(name_lines(), 400, "quicktab (name positions, 3 shells)", redis_server.url)
    assert tally["answered"] >= 0.3 * tally["lines"], tally  # not a vacuous comparison
    assert tally["names"] >= 0.1 * tally["lines"], tally  # and names were printed
