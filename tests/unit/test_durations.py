"""Durations as operators type them; a bare number is milliseconds (Redis' own unit)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pelctl.base.durations import format_duration_ms, parse_duration_ms
from pelctl.base.errors import EXIT_USAGE, InvalidDuration

S, M, H, D = 1_000, 60_000, 3_600_000, 86_400_000


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("0", 0),
        ("250", 250),
        ("1500ms", 1_500),
        ("30s", 30 * S),
        ("5m", 5 * M),
        ("1h", H),
        ("1h30m", H + 30 * M),
        ("2d", 2 * D),
        ("1w", 7 * D),
        ("1d2h3m4s5ms", D + 2 * H + 3 * M + 4 * S + 5),
        ("1.5s", 1_500),
        ("0.5h", 30 * M),
        ("1H30M", H + 30 * M),
        (" 30s ", 30 * S),
        ("90m", 90 * M),
        ("0ms", 0),
        ("007", 7),
        ("1.0001s", 1_000),
        ("1.9999s", 2_000),
    ],
)
def test_parse(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "5x",
        "1h30",
        "h",
        "ms",
        "-5s",
        "+5s",
        "1.2.3s",
        "1 h",
        "1e3",
        "1,5s",
        "5 m",
        "s30",
        "1h-30m",
        "²",
        "١٢٣",
        "１２s",
        "0x10",
        "inf",
        "nan",
        "1hh",
    ],
)
def test_invalid(text: str) -> None:
    with pytest.raises(InvalidDuration) as err:
        parse_duration_ms(text)
    assert err.value.exit_code == EXIT_USAGE
    assert err.value.hint and "1h30m" in err.value.hint


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (None, "-"),
        (0, "0ms"),
        (999, "999ms"),
        (1_000, "1s"),
        (1_500, "1.5s"),
        (9_950, "9.9s"),
        (10_500, "10s"),
        (59_999, "59s"),
        (60_000, "1m00s"),
        (5 * M + 3 * S, "5m03s"),
        (H, "1h00m"),
        (H + 2 * M + 59 * S, "1h02m"),
        (D - 1, "23h59m"),
        (D, "1d00h"),
        (3 * D + 4 * H, "3d04h"),
        (-1_500, "-1.5s"),
    ],
)
def test_format(ms: int | None, text: str) -> None:
    assert format_duration_ms(ms) == text


@given(st.integers(min_value=0, max_value=10**12))
def test_format_then_parse_never_exceeds(ms: int) -> None:
    """What inspect prints in advice (`--idle 1h05m`) parses back to at most the real idle,
    so the suggested command still matches the entries it was computed from."""
    shown = format_duration_ms(ms)
    assert parse_duration_ms(shown) <= ms
    assert ms - parse_duration_ms(shown) < max(ms // 60, 1_000) + H


@given(st.integers(min_value=0, max_value=10**15))
def test_bare_numbers_are_milliseconds(ms: int) -> None:
    assert parse_duration_ms(str(ms)) == ms


# -- exact refusals (messages and hints are what the user reads after `error:` / `hint:`) ----

HINT_EXAMPLES = "use e.g. 1500ms, 30s, 5m, 1h30m, 2d"
HINT_INVALID = "use e.g. 1500ms, 30s, 5m, 1h30m, 2d (a bare number is milliseconds)"
HINT_LARGE = "at most about 290 million years"
MAX = 2**63 - 1  # Redis' idle times are signed 64-bit milliseconds


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("", "empty duration", HINT_EXAMPLES),
        ("   ", "empty duration", HINT_EXAMPLES),
        ("5x", "invalid duration '5x'", HINT_INVALID),
        (" 1h30 ", "invalid duration ' 1h30 '", HINT_INVALID),
        # a bare number: more than 19 digits, or above 2**63 - 1
        (str(MAX + 1), f"duration '{MAX + 1}' is too large", HINT_LARGE),
        ("1" + "0" * 19, "duration '10000000000000000000' is too large", HINT_LARGE),
        # 20 digits are refused even zero-padded: no idle time is written that way
        ("0" * 19 + "1", "duration '00000000000000000001' is too large", HINT_LARGE),
        # far past int()'s 4300-digit limit: still the one error, never a ValueError
        ("9" * 5000, "duration '" + "9" * 37 + "...' is too large", HINT_LARGE),
        # with units: 2**63 ms exactly is one past the largest
        (f"{MAX + 1}ms", f"duration '{MAX + 1}ms' is too large", HINT_LARGE),
        # a float overflow (inf) is too large too
        ("1" + "0" * 400 + "s", "duration '1" + "0" * 36 + "...' is too large", HINT_LARGE),
    ],
)
def test_refusals_are_exact(text: str, message: str, hint: str) -> None:
    with pytest.raises(InvalidDuration) as err:
        parse_duration_ms(text)
    assert (err.value.message, err.value.hint) == (message, hint)
    assert str(err.value) == message
    assert err.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # 40 characters are shown whole, 41 are cut to 37 and "..."
        ("9" * 40, "'" + "9" * 40 + "'"),
        ("9" * 41, "'" + "9" * 37 + "...'"),
        ("9" * 38 + "ms", "'" + "9" * 38 + "ms'"),
        ("9" * 39 + "ms", "'" + "9" * 37 + "...'"),
    ],
)
def test_too_large_names_the_input_at_most_40_characters(text: str, shown: str) -> None:
    with pytest.raises(InvalidDuration) as err:
        parse_duration_ms(text)
    assert err.value.message == f"duration {shown} is too large"


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        (str(MAX), MAX),  # the largest bare number Redis takes
        ("1" + "0" * 18, 10**18),  # 19 digits
        ("0" * 18 + "7", 7),  # 19 digits, zero-padded
        ("9223372036854774784ms", 9223372036854774784),  # the largest float below 2**63
    ],
)
def test_largest_accepted(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms
