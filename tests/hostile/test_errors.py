"""Errors, hints, warnings and info lines: one line each, whatever they quote.

A server's error text echoes names (``NOGROUP No such key 'k' or consumer group 'g'``), a
usage error echoes the argument, a warning may quote a path or a name: none may put a
control character on stderr, and the redaction of secrets stays.
"""

from __future__ import annotations

import sys

import pytest
import redis.exceptions as rex

from pelctl.base.binary import escape
from pelctl.base.errors import GroupNotFound
from tests.hostile.checks import check
from tests.hostile.corpus import BY_KEY, SMALL, assert_safe

SECRET = "s3cret-pw-9f2"


def _raw(name: bytes) -> str:
    """A name as redis-py hands it over in an error text (decoded, undecodable bytes kept)."""
    return name.decode("utf-8", "surrogateescape")


SERVER_ERRORS = {
    "nogroup": lambda n: rex.ResponseError(f"NOGROUP No such key '{n}' or consumer group '{n}'"),
    "wrongtype": lambda n: rex.ResponseError(f"WRONGTYPE Operation against a key '{n}'"),
    "err": lambda n: rex.ResponseError(f"ERR Invalid stream ID specified '{n}' {SECRET}"),
    "noperm": lambda n: rex.NoPermissionError(f"NOPERM this user has no permissions '{n}'"),
    "conn": lambda n: rex.ConnectionError(f"Error connecting to {n}:6379. {SECRET}"),
    "auth": lambda n: rex.AuthenticationError(f"WRONGPASS invalid password {n}"),
}


@pytest.mark.parametrize("kind", SERVER_ERRORS)
@pytest.mark.parametrize("hostile", SMALL, ids=str)
def test_translate_escapes_server_texts(hostile, kind: str) -> None:
    from pelctl.redis.errors import translate

    err = translate(SERVER_ERRORS[kind](_raw(hostile.raw)), "inspect", secrets=(SECRET,))
    assert_safe(err.message, f"translate({kind})")
    assert SECRET not in err.message
    if hostile.key in ("csi", "markup-close"):
        assert escape(hostile.raw) in err.message  # still says which name


@pytest.mark.parametrize("hostile", SMALL, ids=str)
def test_report_error_writes_one_line(capsys, hostile) -> None:
    """The last line of defence: whatever a message holds (here the raw name a redis/ layer
    message quotes), stderr gets one ``error:`` line and one ``hint:`` line."""
    from pelctl.cli.failures import report_error

    name = _raw(hostile.raw)
    err = GroupNotFound(
        f"NOGROUP No such key '{name}' or consumer group '{name}'",
        hint=f"see its groups: pelctl inspect {name}",
    )
    assert report_error(err, None, 0) == 3
    out = capsys.readouterr()
    assert out.out == ""
    assert_safe(out.err, "report_error")
    lines = out.err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint: ")

    assert report_error(rex.ResponseError(f"ERR bad '{name}'"), None, 0) == 1
    err_text = capsys.readouterr().err
    assert_safe(err_text, "report_error (redis error)")
    assert len(err_text.splitlines()) == 1


@pytest.mark.parametrize("hostile", SMALL, ids=str)
def test_warnings_and_info_lines(capsys, hostile) -> None:
    from pelctl.cli.options import Runtime

    rt = Runtime({}, "test")
    name = _raw(hostile.raw)
    rt.warn(f"context file quotes {name}")
    rt.info(f"note: {name}")
    err = capsys.readouterr().err
    assert_safe(err, "warn/info")
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("warning: ") and lines[1].startswith("note: ")


USAGE_CASES = [BY_KEY[k] for k in ("csi", "osc52-bel", "c1-chars", "markup-close", "newline")]


@pytest.mark.parametrize("hostile", USAGE_CASES, ids=str)
def test_usage_error_quoting_the_argument(monkeypatch, capsys, hostile) -> None:
    """The installed entry point reports click's usage errors itself: the bad value it quotes
    is data pasted from somewhere, escaped like the rest."""
    from pelctl.cli.main import main

    value = _raw(hostile.raw)
    monkeypatch.setattr(sys, "argv", ["pelctl", "histogram", "--by", value, "s", "g"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert_safe(err, "usage error")
    assert err.startswith("error: ") and len(err.splitlines()) == 2


@pytest.mark.parametrize("hostile", SMALL, ids=str)
def test_not_found_and_wrong_type(run, dataset, hostile_server, hostile) -> None:
    """Missing groups and streams and a key of the wrong type, named by corpus entries: exit
    3 as always, one error line and one hint line."""
    t = dataset[hostile.key]
    missing = escape(t.name + b"\x1b[2J-missing")
    r = run("pending", "--", t.arg, missing)
    check(r, "ndjson", f"pending on a missing group {hostile.key}", code=3)
    assert len(r.stderr.splitlines()) == 2 and r.stdout == ""
    r = run("inspect", "--", missing)
    check(r, "plain", f"inspect a missing stream {hostile.key}", code=3)
    client = hostile_server.client()
    try:
        client.hset(t.name + b":hash", "f", "v")
    finally:
        client.close()
    r = run("dlq", "stats", "--", escape(t.name + b":hash"))
    check(r, "plain", f"dlq stats on a hash {hostile.key}", code=3)
