"""Bad input, fuzzed: durations, numbers, ids, names (binary, empty, huge), ranges and globs.

For every input: no traceback, a documented exit code (usage errors are 2, missing
streams/groups 3), one ``error:`` line on failure, and the server is byte-for-byte unchanged.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.conftest import FUZZ, assert_unchanged, check_run, count
from tests.topologies.runner import run_pelctl

# Text as argv delivers it: any Unicode but NUL, and undecodable bytes as surrogate escapes.
argv_text = st.one_of(
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40),
    st.binary(max_size=40).map(
        lambda b: b.replace(b"\x00", b"").decode("utf-8", "surrogateescape")
    ),
)
huge = st.integers(min_value=1_000, max_value=200_000).map(lambda n: "x" * n)
duration_like = st.one_of(
    argv_text,
    st.from_regex(r"\A-?[0-9]{0,25}(\.[0-9]{0,5})?(ms|s|m|h|d|w|us|y)?\Z", fullmatch=True),
    st.lists(
        st.tuples(st.integers(0, 10**20), st.sampled_from(["ms", "s", "m", "h", "d", "w"])),
        max_size=5,
    ).map(lambda parts: "".join(f"{n}{u}" for n, u in parts)),
)
number_like = st.one_of(
    argv_text,
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e309", "0x10", "1_000", " 5", "５", "0"]),
)
id_like = st.one_of(
    argv_text,
    st.tuples(st.integers(-5, 2**64 + 5), st.integers(-5, 2**64 + 5)).map(
        lambda t: f"{t[0]}-{t[1]}"
    ),
    st.integers(-5, 2**64 + 5).map(str),
    st.sampled_from(
        ["-", "+", "0-0", "(1-0", "1-*", "*", "$", ">", "18446744073709551615-18446744073709551615"]
    ),
)
name_like = st.one_of(
    argv_text, huge, st.just(""), st.sampled_from(["s", "g", "\\xff\\x00", "\\", "{s}"])
)


@pytest.fixture
def run(fuzz_server):
    def invoke(*args: str):
        return run_pelctl(*args, url=fuzz_server.url)

    return invoke


# -- pure functions (cheap: many cases) ------------------------------------------------------


@FUZZ.__class__(FUZZ, max_examples=1000)
@given(text=duration_like)
@example("²")
@example("9" * 400 + "w")
@example("1e400s")
def test_parse_duration_ms_never_crashes(text):
    from pelctl.base.durations import parse_duration_ms
    from pelctl.base.errors import InvalidDuration

    count("durations (parse_duration_ms)")
    try:
        ms = parse_duration_ms(text)
    except InvalidDuration:
        return
    assert isinstance(ms, int) and ms >= 0


@FUZZ.__class__(FUZZ, max_examples=1000)
@given(raw=st.binary(max_size=200))
def test_escape_round_trips_any_bytes(raw):
    from pelctl.base.binary import escape, unescape

    count("names (escape/unescape round trip)")
    shown = escape(raw)
    assert unescape(shown) == raw
    assert "\x00" not in shown and "\n" not in shown


@FUZZ.__class__(FUZZ, max_examples=1000)
@given(text=argv_text)
def test_unescape_accepts_any_argv_text(text):
    from pelctl.base.binary import escape, unescape

    count("names (unescape of any argv text)")
    raw = unescape(text)
    assert isinstance(raw, bytes)
    assert unescape(escape(raw)) == raw


@FUZZ.__class__(FUZZ, max_examples=500)
@given(
    user=st.from_regex(r"\A[a-z]{0,8}\Z", fullmatch=True),
    # Any printable password but a raw "/" (that one starts the URL's path: it must be
    # percent-encoded, and is tested encoded below).
    password=st.text(
        st.characters(whitelist_categories=("L", "N", "P", "S"), blacklist_characters="/"),
        min_size=1,
        max_size=30,
    ).map(lambda p: "PW" + p + "Zq"),
    host=st.sampled_from(["127.0.0.1:6379", "h:1", "[::1]:7000", "redis.internal"]),
    scheme=st.sampled_from(["redis", "rediss", "redis+sentinel"]),
)
def test_redaction_never_shows_the_password(user, password, host, scheme):
    from urllib.parse import quote

    from pelctl.redis.url import redact, redact_text

    count("urls (redaction)")
    for pw in (password, quote(password, safe="")):
        url = f"{scheme}://{user}:{pw}@{host}/0"
        assert pw not in redact(url)
        assert pw not in redact_text(f"error talking to {url}: boom")


# -- the CLI (each case is a full pelctl run against the server) ------------------------------


@FUZZ.__class__(FUZZ, max_examples=150)
@given(value=duration_like)
@example("1e400s")
@example("99999999999999999999999w")
def test_cli_durations(run, fuzz_server, baseline, value):
    count("durations (CLI)")
    for args in (
        ["pending", "s", "g", "--idle", value],
        ["inspect", "s", "--dead-after", value],
        ["histogram", "s", "g", "--buckets", value],
        ["histogram", "s", "g", "--by", "deliveries", "--buckets", value],
    ):
        check_run(run(*args), {0, 2})
    check_run(run("dlq", "list", "s:dlq", "--since", value), {0, 2})
    check_run(run("dlq", "list", "s:dlq", "--until", value), {0, 2})
    assert_unchanged(fuzz_server, baseline)


@FUZZ.__class__(FUZZ, max_examples=120)
@given(value=number_like)
@example("nan")
@example("inf")
@example("1e309")
def test_cli_numbers(run, fuzz_server, baseline, value):
    count("numbers and ranges (CLI)")
    check_run(run("pending", "s", "g", "--limit", value), {0, 2})
    check_run(run("pending", "s", "g", "--min-deliveries", value), {0, 2})
    check_run(run("pending", "s", "g", "--max-server-ms", value, "--all"), {0, 2})
    check_run(run("inspect", "s", "--oldest", value), {0, 2})
    check_run(run("histogram", "s", "g", "--max-server-ms", value), {0, 2})
    check_run(run("histogram", "s", "g", "--by", "consumer", "--top", value), {0, 2})
    assert_unchanged(fuzz_server, baseline)


@FUZZ.__class__(FUZZ, max_examples=120)
@given(stream=name_like, group=name_like, consumer=name_like)
@example("", "", "")
@example("\\xff\\x00\\x01", "g", "dead")
@example("x" * 100_000, "g", "c")
def test_cli_names(run, fuzz_server, baseline, stream, group, consumer):
    count("stream/group/consumer names (CLI)")
    check_run(run("inspect", stream), {0, 2, 3})
    check_run(run("inspect", "s", "--group", group), {0, 2, 3})
    check_run(run("pending", stream, group), {0, 2, 3})
    check_run(run("pending", "s", group, "--consumer", consumer, "--with-payload"), {0, 2, 3})
    check_run(run("streams", "--match", stream), {0, 2})
    for cmd in ("histogram", "ghosts"):
        check_run(run(cmd, stream, group), {0, 2, 3})
    assert_unchanged(fuzz_server, baseline)


@FUZZ.__class__(FUZZ, max_examples=120)
@given(ids=st.lists(id_like, min_size=1, max_size=4), to=name_like)
@example(["0-0"], "c")
@example(["18446744073709551615-18446744073709551615"], "")
@example(["-"], "c")
def test_cli_ids_for_repairs(run, fuzz_server, baseline, ids, to):
    """Ids that match no pending entry: a usage error or nothing done, never a change."""
    count("entry ids (repairs, applied with --yes)")
    for args in (
        ["ack", "s", "g", *ids, "--yes"],
        ["claim", "s", "g", *ids, "--to", to or "c", "--yes"],
        ["requeue", "s", "g", *ids, "--yes"],
        ["dlq", "move", "s", "g", *ids, "--yes"],
        ["claim", "s", "g", *ids, "--to", to, "--dry-run"],
    ):
        # A valid id that is not pending is skipped; 5 would mean "some items failed".
        check_run(run(*args), {0, 2, 3, 5})
    check_run(run("dlq", "show", "s:dlq", ids[0]), {0, 2, 3})
    assert_unchanged(fuzz_server, baseline)
