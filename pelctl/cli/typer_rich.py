"""typer's rich help printer, without the two rich modules pelctl's help never uses.

``typer.rich_utils`` imports ``rich.markdown`` (markdown-it, pygments: for
``rich_markup_mode="markdown"``) and ``rich.traceback`` (rich.pretty, attrs: for pretty
exceptions) at its top: about 40% of ``pelctl --help``'s time. pelctl's help is
``rich_markup_mode="rich"`` and its exceptions are not pretty-printed, so :func:`rich_utils`
imports typer's module with the two names standing in for their classes: each loads the
real module when it is used, and ``sys.modules`` never holds the stand-ins (any other
``import rich.markdown`` gets the real module).
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _Markdown:
    """``rich.markdown.Markdown``, imported when one is made."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from rich.markdown import Markdown

        return Markdown(*args, **kwargs)


class _Traceback:
    """``rich.traceback.Traceback``, imported when one is made."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from rich.traceback import Traceback

        return Traceback(*args, **kwargs)

    @classmethod
    def from_exception(cls, *args: Any, **kwargs: Any) -> Any:
        from rich.traceback import Traceback

        return Traceback.from_exception(*args, **kwargs)


_STAND_INS = {
    "rich.markdown": ("Markdown", _Markdown),
    "rich.traceback": ("Traceback", _Traceback),
}


def rich_utils() -> types.ModuleType:
    """``typer.rich_utils``, imported (the first time) with the stand-ins above."""
    loaded = sys.modules.get("typer.rich_utils")
    if loaded is not None:
        return loaded
    import rich

    placed: dict[str, types.ModuleType] = {}
    for name, (attr, cls) in _STAND_INS.items():
        if name not in sys.modules:
            placed[name] = types.ModuleType(name)
            setattr(placed[name], attr, cls)
            sys.modules[name] = placed[name]
    try:
        import typer.rich_utils
    finally:
        for name, stand_in in placed.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
            short = name.rsplit(".", 1)[1]
            if getattr(rich, short, None) is stand_in:
                delattr(rich, short)
    return typer.rich_utils
