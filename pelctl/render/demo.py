"""The document and lines of ``pelctl demo status``: ``STATUS``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from pelctl.render.protocol import Line, Pairs, Part, ResultRenderer


class Running(Protocol):
    """The running demo server (``pelctl.demo.server.DemoState``)."""

    @property
    def url(self) -> str: ...
    @property
    def pid(self) -> int: ...
    @property
    def dir(self) -> str: ...


class StatusRenderer(ResultRenderer["Running | None"]):
    """Whether the demo runs (None: it does not), its URL and process."""

    def document(self, result: Running | None) -> dict[str, Any]:
        return {
            "running": result is not None,
            "url": result.url if result else None,
            "pid": result.pid if result else None,
        }

    def view(self, result: Running | None, width: int) -> Iterable[Part]:
        if result is None:
            return (Line("not running (start it with: pelctl demo up)"),)
        pairs = [("running", "yes"), ("url", result.url), ("pid", str(result.pid))]
        return (Pairs([*pairs, ("dir", result.dir)]),)


STATUS = StatusRenderer()
