"""The registry: decoders of other distributions (entry-point group ``pelctl.decoders``,
loaded at the first :func:`decode`, tried first in the order of their names), then the
built-in ones (``faststream``, ``taskiq``, ``json``). A decoder that raises, returns
something else or data that cannot be shown is skipped for that entry and recorded
(:func:`problems`); a plugin's data is made JSON-able before any surface sees it."""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from pelctl.base.binary import clean, to_json_text
from pelctl.core.decoders.common import (
    MAX_DEPTH,
    PREVIEW_CHARS,
    Decoded,
    DecodeFn,
    Fields,
)
from pelctl.core.decoders.faststream import decode_faststream
from pelctl.core.decoders.json_values import decode_json
from pelctl.core.decoders.taskiq import decode_taskiq

ENTRY_POINT_GROUP = "pelctl.decoders"

BUILTIN: tuple[tuple[str, DecodeFn], ...] = (
    ("faststream", decode_faststream),
    ("taskiq", decode_taskiq),
    ("json", decode_json),
)


_TRUSTED = frozenset(fn for _name, fn in BUILTIN)
_lock = threading.Lock()
_plugins: list[tuple[str, DecodeFn]] | None = None
_problems: dict[str, str] = {}


def _as_function(obj: Any) -> DecodeFn | None:
    if isinstance(obj, type):
        obj = obj()
    fn = getattr(obj, "decode", None)
    if callable(fn):
        return fn
    return obj if callable(obj) else None


def _load_plugins() -> list[tuple[str, DecodeFn]]:
    from importlib.metadata import entry_points

    found: list[tuple[str, DecodeFn]] = []
    try:
        points = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    except Exception as err:  # noqa: BLE001 - broken metadata must not break a listing
        _problems["(entry points)"] = f"cannot list the {ENTRY_POINT_GROUP} entry points: {err}"
        return found
    seen: set[str] = set()
    for ep in points:
        if ep.name in seen:
            continue  # the same name twice on sys.path: the first one wins, as for imports
        seen.add(ep.name)
        try:
            fn = _as_function(ep.load())
        except Exception as err:  # noqa: BLE001
            _problems[ep.name] = f"cannot load {ep.value}: {type(err).__name__}: {err}"
            continue
        if fn is None:
            _problems[ep.name] = f"{ep.value} is neither a function nor has a decode() method"
            continue
        found.append((ep.name, fn))
    return found


def registered() -> list[tuple[str, DecodeFn]]:
    """Every decoder in the order they are tried: entry points (by name), then built-ins."""
    global _plugins
    if _plugins is None:
        with _lock:
            if _plugins is None:
                _plugins = _load_plugins()
    return [*_plugins, *BUILTIN]


def reset() -> None:
    """Forget the loaded entry points (the next decode looks them up again)."""
    global _plugins
    with _lock:
        _plugins = None
        _problems.clear()


def problems() -> dict[str, str]:
    """Decoders that failed to load or raised, by name: the latest problem of each."""
    return dict(_problems)


def _jsonable(value: Any, depth: int = 0) -> Any:
    """A plugin's data made JSON-able: bytes as text (escaped when not UTF-8), tuples and
    sets as lists, keys as strings, non-finite floats and other objects as their text."""
    if depth > MAX_DEPTH:
        return "…"
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return to_json_text(bytes(value))
    if isinstance(value, Mapping):
        return {
            (to_json_text(k) if isinstance(k, bytes) else str(k)): _jsonable(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v, depth + 1) for v in value]
    return str(value)


def _checked(result: Decoded, name: str) -> Decoded:
    """A plugin's result with its types made safe to render and to write as JSON."""
    # A plugin's Decoded holds whatever it put there, whatever the annotations say.
    raw: Any = result
    data = raw.data if isinstance(raw.data, Mapping) else {}
    summary = raw.summary if isinstance(raw.summary, str) else str(raw.summary)
    notes = tuple(str(n) for n in raw.notes) if isinstance(raw.notes, tuple | list) else ()
    fmt = raw.format if isinstance(raw.format, str) and raw.format else name
    return Decoded(clean(fmt), _jsonable(data), summary[: PREVIEW_CHARS * 4], notes)


def decode(fields: Fields | None) -> Decoded | None:
    """The first decoder's view of ``fields``, or None (not fetched, gone, or no decoder
    recognises the entry: show the raw fields). Never raises."""
    if not fields:
        return None
    for name, fn in registered():
        try:
            result = fn(fields)
        except Exception as err:  # noqa: BLE001 - a broken decoder never breaks a listing
            _problems[name] = f"raised {type(err).__name__}: {err}"
            continue
        if result is None:
            continue
        if not isinstance(result, Decoded):
            _problems[name] = f"returned {type(result).__name__}, not Decoded or None"
            continue
        if fn in _TRUSTED:
            return result
        try:
            return _checked(result, name)
        except Exception as err:  # noqa: BLE001
            _problems[name] = f"returned data that cannot be shown: {type(err).__name__}: {err}"
    return None
