"""The ``:`` command line's jumps, k9s style (headless): parsing and completion.

``:streams`` the streams list, ``:stream NAME`` a stream (its group, or the group picker),
``:group [NAME]`` a group of the current stream (no name: the picker), ``:dlq [NAME]`` a
dead-letter view (no name: the current stream's), ``:q`` quit. A jump may be shortened to
any prefix that names only it (``:gr billing``). Names are typed and completed in their
escaped form (``pelctl.base.binary.escape``: what the tables show) and unescaped when the
jump runs, so a binary name round-trips.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pelctl.base.binary import unescape
from pelctl.base.errors import UsageError

# Jump name -> (argument it takes, what it does); in the order completion offers them.
JUMPS: dict[str, tuple[str, str]] = {
    "streams": ("", "the streams list"),
    "stream": ("NAME", "open a stream (its group, or a choice of groups)"),
    "group": ("[NAME]", "a group of this stream (no name: choose one)"),
    "dlq": ("[NAME]", "a dead-letter view (no name: this stream's)"),
    "q": ("", "quit pelctl"),
}
ALIASES = {"quit": "q", "q!": "q", "exit": "q"}
NEEDS_NAME = {"stream"}
TAKES_NAME = {"stream", "group", "dlq"}


@dataclass(frozen=True, slots=True)
class Jump:
    name: str  # a key of JUMPS
    arg: bytes | None = None  # the name typed after it, unescaped


def usage() -> str:
    return "  ".join(f":{name} {arg}".rstrip() for name, (arg, _what) in JUMPS.items())


def parse(line: str) -> Jump:
    """``streams``, ``:group billing``, ``q``... as a :class:`Jump`; raises ``UsageError``
    (its message fit for a notification) for anything else."""
    text = line.strip().removeprefix(":").strip()
    if not text:
        raise UsageError("type a jump after ':'", hint=usage())
    word, _, rest = text.partition(" ")
    name = resolve(word)
    if name is None:
        starts = [n for n in JUMPS if n.startswith(word)]
        if len(starts) > 1:
            raise UsageError(f":{word} is :{' or :'.join(starts)}?", hint=usage())
        raise UsageError(f"unknown jump :{word}", hint=usage())
    rest = rest.strip()
    if rest and name not in TAKES_NAME:
        raise UsageError(f":{name} takes no name", hint=usage())
    if not rest and name in NEEDS_NAME:
        raise UsageError(f":{name} needs a name: :{name} {JUMPS[name][0]}", hint=usage())
    return Jump(name, unescape(rest) if rest else None)


def resolve(word: str) -> str | None:
    """The jump ``word`` names: itself, an alias, or the one jump it starts (``gr``)."""
    if word in JUMPS:
        return word
    if word in ALIASES:
        return ALIASES[word]
    starts = [n for n in JUMPS if n.startswith(word)] if word else []
    return starts[0] if len(starts) == 1 else None


def complete(line: str, names: Mapping[str, Iterable[str]]) -> str | None:
    """The whole line completed (it starts with ``line`` as typed), or None.

    Completes the jump name, then the name after it from ``names[jump]`` (escaped names:
    streams for ``stream``, groups of the current stream for ``group``, dead-letter streams
    for ``dlq``): the first, in ``names`` order, that starts with what was typed (case
    matters: names are exact)."""
    head = line.lstrip()
    if " " not in head:
        word = head.removeprefix(":")
        if not word:
            return None
        for name in JUMPS:
            if name.startswith(word) and name != word:
                return line + name[len(word) :]
        return None
    word, _, typed = head.removeprefix(":").partition(" ")
    jump = resolve(word)
    if jump is None or jump not in TAKES_NAME:
        return None
    typed = typed.lstrip()
    for candidate in names.get(jump, ()):
        if candidate != typed and candidate.startswith(typed):
            return line + candidate[len(typed) :]
    return None
