"""Documents and rows of ``pelctl config``: the resolved settings (``SHOW``), the contexts
(:func:`contexts`), the current context (``CURRENT``) and a switch (``SWITCHED``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pelctl.config import Config, Context
from pelctl.redis.settings import ConnectionSettings
from pelctl.redis.url import redact
from pelctl.render.protocol import Line, Listing, Pairs, Part, ResultRenderer, Rows
from pelctl.render.table import Column


@dataclass(frozen=True)
class Resolved:
    """What ``config show`` tells: the settings a command would use, and the files."""

    settings: ConnectionSettings
    config_file: Path
    config_exists: bool
    audit_log: Path


class ShowRenderer(ResultRenderer[Resolved]):
    """The settings as one document (secrets redacted), label/value lines in text."""

    def document(self, result: Resolved) -> dict[str, Any]:
        s = result.settings
        return {
            "config_file": str(result.config_file),
            "config_exists": result.config_exists,
            "context": s.context,
            "url": s.redacted_url,
            "url_source": s.url_source,
            "username": s.username,
            "password": "***" if s.password else None,
            "tls_ca": s.tls_ca,
            "tls_cert": s.tls_cert,
            "tls_key": s.tls_key,
            "tls_insecure": s.tls_insecure,
            "cluster": s.cluster,
            "read_only": s.read_only,
            "default_group": s.default_group,
            "max_server_share": s.max_server_share,
            "client_name": s.client_name,
            "audit_log": str(result.audit_log),
        }

    def view(self, result: Resolved, width: int) -> Iterable[Part]:
        doc = self.document(result)
        return (Pairs([(k, "-" if v is None else str(v)) for k, v in doc.items()]),)


SHOW = ShowRenderer()

CONTEXT_COLUMNS = (
    Column("current", " "),
    Column("name", "NAME"),
    Column("url", "URL"),
    Column("group", "GROUP"),
    Column("read_only", "READ-ONLY"),
    Column("description", "DESCRIPTION"),
)


def contexts(config: Config) -> Listing[Context]:
    """``config contexts``: each context of ``config``, the current one marked ``*``."""

    def url(c: Context) -> str | None:
        return redact(c.url) if c.url else None

    def row(c: Context) -> tuple[str, ...]:
        return (
            "*" if c.name == config.current_context else "",
            c.name,
            url(c) or "-",
            c.group or "-",
            "yes" if c.read_only else "no",
            c.description or "",
        )

    def record(c: Context) -> dict[str, Any]:
        return {
            "context": c.name,
            "current": c.name == config.current_context,
            "url": url(c),
            "group": c.group,
            "read_only": c.read_only,
            "description": c.description,
        }

    return Listing(Rows(CONTEXT_COLUMNS, row, record), empty=f"no contexts in {config.path}")


class CurrentRenderer(ResultRenderer[Config]):
    """``config current-context``: the name alone in text (for scripts), nothing when none
    is set (the command then fails, saying so)."""

    def document(self, result: Config) -> dict[str, Any]:
        return {"current_context": result.current_context, "config_file": str(result.path)}

    def view(self, result: Config, width: int) -> Iterable[Part]:
        name = result.current_context
        return (Line(name),) if name is not None else ()


CURRENT = CurrentRenderer()


@dataclass(frozen=True)
class Switch:
    """``config use-context NAME``: the context chosen, and the config file before."""

    name: str
    before: Config


class SwitchedRenderer(ResultRenderer[Switch]):
    def document(self, result: Switch) -> dict[str, Any]:
        return {
            "current_context": result.name,
            "previous": result.before.current_context,
            "config_file": str(result.before.path),
        }

    def view(self, result: Switch, width: int) -> Iterable[Part]:
        return (Line(f"switched to context {result.name} (in {result.before.path})"),)


SWITCHED = SwitchedRenderer()
