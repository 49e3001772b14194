"""The document and lines of ``pelctl version``: ``VERSION``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pelctl.render.protocol import Pairs, Part, ResultRenderer


@dataclass(frozen=True)
class Server:
    """The server ``--server`` connected to: its redacted URL (``server`` everywhere in
    the JSON), what inspect and snapshot call its version (``redis 7.0.15``), and what it
    can do."""

    url: str
    version: str
    cluster: bool
    features: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class Versions:
    pelctl: str
    python: str
    redis_py: str
    hiredis: str | None
    server: Server | None = None


class VersionRenderer(ResultRenderer[Versions]):
    def document(self, result: Versions) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "pelctl": result.pelctl,
            "python": result.python,
            "redis-py": result.redis_py,
            "hiredis": result.hiredis,
        }
        s = result.server
        if s is not None:
            doc.update(
                server=s.url, server_version=s.version, cluster=s.cluster, features=dict(s.features)
            )
        return doc

    def view(self, result: Versions, width: int) -> Iterable[Part]:
        pairs = [
            ("pelctl", result.pelctl),
            ("python", result.python),
            ("redis-py", result.redis_py),
            ("hiredis", str(result.hiredis)),
        ]
        s = result.server
        if s is not None:
            pairs += [("server", f"{s.version} at {s.url}"), ("cluster", _yes(s.cluster))]
            pairs += [(f"  {name}", _yes(ok)) for name, ok in s.features.items()]
        return (Pairs(pairs),)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


VERSION = VersionRenderer()
