"""Shell completion is a display surface too: the hostile names reach the shell's command line
and its menus. Every name offered is escaped as pelctl prints it (no control character, one
line, nothing the shell's protocol could split), and typed back it is the same name."""

from __future__ import annotations

import shlex

import pytest

from pelctl.base.binary import escape, unescape
from tests.cli.test_completion import complete
from tests.hostile.conftest import ALL, ALL_GROUP
from tests.hostile.corpus import SMALL, assert_safe


def typed_back(value: str, shell: str) -> bytes:
    """What the shell puts on the command line for a completion, as pelctl reads it."""
    if shell == "bash":  # shell-escaped by pelctl
        value = shlex.split(value)[0] if value else value
    return unescape(value)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_names_are_escaped_and_round_trip(hostile_server, dataset, shell) -> None:
    env = {"PELCTL_URL": hostile_server.url}
    streams = complete("pelctl inspect ", shell, env=env)
    assert_safe("\n".join(streams), f"{shell}: stream names", allow="\n")
    offered = {typed_back(v, shell) for v in streams}
    assert {h.raw for h in SMALL} <= offered and ALL in offered
    for h in SMALL:
        arg = shlex.quote(escape(h.raw))
        groups = complete(f"pelctl pending -- {arg} ", shell, env=env)
        assert_safe("\n".join(groups), f"{shell}: groups of {h.key}", allow="\n")
        assert [typed_back(v, shell) for v in groups] == [h.raw], h.key
    consumers = complete(
        f"pelctl pending {ALL.decode()} {ALL_GROUP.decode()} --consumer ", shell, env=env
    )
    assert_safe("\n".join(consumers), f"{shell}: consumers", allow="\n")
    assert {typed_back(v, shell) for v in consumers} == {h.raw for h in SMALL}
