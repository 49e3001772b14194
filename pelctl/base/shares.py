"""A share of the server's time, as operators type it: ``5%`` or ``0.05``.

What the polling surfaces (the dashboard, ``--watch``, the reclaim loop's passes, the
exporter) may use of one Redis server's time, by default 5% (docs/server-budget.md).
"""

from __future__ import annotations

import math

from pelctl.base.errors import UsageError

DEFAULT_MAX_SERVER_SHARE = 0.05
# Below this a big PEL would be scanned about once a day; above 1 the share means nothing.
MIN_SHARE = 0.0001
MAX_SHARE = 1.0
_HINT = "a percentage or a fraction of the server's time, e.g. 5% or 0.05 (default 5%)"


def parse_share(text: str, *, source: str = "--max-server-share") -> float:
    """``5%`` -> 0.05, ``0.05`` -> 0.05, ``100%`` -> 1.0. A bare number above 1 is refused
    (is ``5`` 5% or 500%?); so is anything outside 0.01% .. 100%.

    >>> parse_share("5%")
    0.05
    >>> parse_share("0.2")
    0.2
    """
    raw = text.strip()
    percent = raw.endswith("%")
    body = raw[:-1].strip() if percent else raw
    try:
        value = float(body)
    except ValueError:
        raise UsageError(f"{source}: invalid share {text!r}", hint=_HINT) from None
    if not math.isfinite(value):
        raise UsageError(f"{source}: invalid share {text!r}", hint=_HINT)
    if percent:
        value /= 100.0
    elif value > 1.0:
        raise UsageError(
            f"{source}: {text!r} is ambiguous: write {body}% for a percentage", hint=_HINT
        )
    if not MIN_SHARE <= value <= MAX_SHARE:
        raise UsageError(f"{source}: {text!r} is out of range (0.01% to 100%)", hint=_HINT)
    return round(value, 6)


def format_share(share: float) -> str:
    """0.05 -> ``5%``, 0.125 -> ``12.5%``, 0.0005 -> ``0.05%``."""
    pct = share * 100.0
    if pct >= 10 or pct == int(pct):
        text = f"{pct:.1f}"
    elif pct >= 1:
        text = f"{pct:.2f}"
    else:
        text = f"{pct:.3f}"
    return text.rstrip("0").rstrip(".") + "%"
