"""Durations as operators type them: ``1500ms 30s 5m 1h30m 2d``; a bare number is milliseconds."""

from __future__ import annotations

import re
from datetime import timedelta

from pelctl.base.errors import InvalidDuration

_UNITS_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
# Redis takes idle times as signed 64-bit milliseconds. A bare number is compared as an int:
# float(2**63 - 1) is 2**63, so comparing with the float let 2**63 itself through.
_MAX_INT = 2**63 - 1
_MAX_MS = float(_MAX_INT)
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)", re.ASCII)


def parse_duration_ms(text: str) -> int:
    """Parse a duration into whole milliseconds.

    >>> parse_duration_ms("1h30m")
    5400000
    >>> parse_duration_ms("250")
    250
    """
    raw = text.strip().lower()
    if not raw:
        raise InvalidDuration("empty duration", hint="use e.g. 1500ms, 30s, 5m, 1h30m, 2d")
    if raw.isascii() and raw.isdigit():  # not str.isdigit alone: "²" is a digit to it
        if len(raw) > 19 or int(raw) > _MAX_INT:
            raise InvalidDuration(
                f"duration {_short(text)} is too large", hint="at most about 290 million years"
            )
        return int(raw)
    pos = 0
    total = 0.0
    for match in _PART.finditer(raw):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS_MS[match.group(2)]
        pos = match.end()
    if pos != len(raw) or pos == 0:
        raise InvalidDuration(
            f"invalid duration {text!r}",
            hint="use e.g. 1500ms, 30s, 5m, 1h30m, 2d (a bare number is milliseconds)",
        )
    if not total < _MAX_MS:  # also catches inf ("1e400s" style overflows)
        raise InvalidDuration(
            f"duration {_short(text)} is too large", hint="at most about 290 million years"
        )
    return int(round(total))


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def format_duration_ms(ms: int | None) -> str:
    """Compact human form: ``850ms``, ``42s``, ``5m03s``, ``1h02m``, ``3d04h``."""
    if ms is None:
        return "-"
    if ms < 0:
        return "-" + format_duration_ms(-ms)
    if ms < 1_000:
        return f"{ms}ms"
    seconds = ms // 1_000
    if seconds < 60:
        tenths = (ms % 1_000) // 100
        return f"{seconds}.{tenths}s" if seconds < 10 and tenths else f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


# What the library accepts for a duration (pelctl.ReliableConsumer's min_idle, block, ...).
Duration = int | float | str | timedelta


def duration_ms(value: Duration) -> int:
    """Milliseconds from an int (ms), a float (seconds), a duration text or a timedelta."""
    if isinstance(value, timedelta):
        return int(value.total_seconds() * 1000)
    if isinstance(value, str):
        return parse_duration_ms(value)
    if isinstance(value, float):
        return int(value * 1000)
    return int(value)
