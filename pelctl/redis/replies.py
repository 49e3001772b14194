"""Raw RESP2 replies (response callbacks off) into Python shapes.

``XINFO GROUPS``/``CONSUMERS``/``STREAM``, ``CONFIG GET`` and an entry's fields all come back
as one flat list of alternating names and values: ``[k1, v1, k2, v2, ...]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def pairs(flat: Sequence[Any]) -> dict[Any, Any]:
    """``[k1, v1, k2, v2]`` -> ``{k1: v1, k2: v2}`` (an ``XINFO`` row, a ``CONFIG GET``)."""
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def rows(reply: Iterable[Sequence[Any]]) -> list[dict[Any, Any]]:
    """A list of flat rows (``XINFO GROUPS``, ``XINFO CONSUMERS``) -> a list of dicts."""
    return [pairs(row) for row in reply]


def field_pairs(flat: Sequence[Any]) -> tuple[tuple[Any, Any], ...]:
    """An entry's flat fields -> ``((name, value), ...)`` in order, repeated names kept."""
    return tuple(zip(flat[0::2], flat[1::2], strict=True))


def array(reply: object) -> list[Any]:
    """An array reply (a script's answer, a transaction's replies) as a list. Anything else
    (a status, nil) is a TypeError naming it, rather than a wrong index further on."""
    if isinstance(reply, (list, tuple)):
        return list(reply)
    raise TypeError(f"expected an array reply, got {reply!r}")


def vanished_or_raise(reply: Any) -> Any:
    """A reply of a pipeline run with ``raise_on_error=False`` over keys found by SCAN:
    an error of a key deleted or retyped since (WRONGTYPE, no such key, NOGROUP) is kept
    for the caller to skip; any other error is raised.

    Swallowing every error would turn an ACL ``NOPERM`` into "no streams found" (exit 0).
    """
    if isinstance(reply, Exception):
        text = str(reply)
        if not (
            text.startswith("WRONGTYPE")
            or "no such key" in text.lower()
            or text.startswith("NOGROUP")
        ):
            raise reply
    return reply
