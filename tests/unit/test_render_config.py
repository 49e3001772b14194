"""pelctl/render/config.py: the documents and rows of ``pelctl config`` (no server, no
config file)."""

from __future__ import annotations

from pathlib import Path

from pelctl.config import Config, Context
from pelctl.redis.settings import ConnectionSettings
from pelctl.render import config as cr
from pelctl.render.protocol import Line, Pairs
from pelctl.render.table import TableData
from tests.unit.render_text import render

CONFIG = Config(
    Path("/home/ops/.config/pelctl/config.toml"),
    True,
    current_context="prod",
    contexts={
        "prod": Context("prod", url="redis://:s3cret@prod:6379/0", group="billing"),
        "lab": Context("lab", read_only=True, description="the lab"),
    },
)


def test_show() -> None:
    settings = ConnectionSettings(url="redis://:s3cret@prod:6379/0", password="s3cret")
    resolved = cr.Resolved(settings, CONFIG.path, True, Path("/state/audit.jsonl"))
    doc = cr.SHOW.document(resolved)
    assert doc["url"] == "redis://:***@prod:6379/0" and doc["password"] == "***"
    assert (doc["config_file"], doc["config_exists"], doc["audit_log"]) == (
        str(CONFIG.path),
        True,
        "/state/audit.jsonl",
    )
    assert "s3cret" not in str(doc)
    (pairs,) = cr.SHOW.view(resolved, 100)
    assert isinstance(pairs, Pairs)
    shown = dict(pairs.pairs)
    assert shown.keys() == doc.keys()
    assert shown["username"] == "-" and shown["read_only"] == "False"


def test_contexts() -> None:
    listing = cr.contexts(CONFIG)
    items = list(CONFIG.contexts.values())
    assert listing.document(items) == [
        {
            "context": "prod",
            "current": True,
            "url": "redis://:***@prod:6379/0",
            "group": "billing",
            "read_only": False,
            "description": None,
        },
        {
            "context": "lab",
            "current": False,
            "url": None,
            "group": None,
            "read_only": True,
            "description": "the lab",
        },
    ]
    (table,) = listing.view(items, 100)
    assert isinstance(table, TableData)
    assert render("plain", table) == (
        "     NAME    URL                       GROUP    READ-ONLY    DESCRIPTION\n"
        "*    prod    redis://:***@prod:6379/0  billing  no\n"
        "     lab     -                         -        yes          the lab\n"
    )
    (empty,) = cr.contexts(Config(CONFIG.path, False)).view([], 100)
    assert isinstance(empty, TableData)
    assert empty.caption == "no contexts in /home/ops/.config/pelctl/config.toml"


def test_current_and_switched() -> None:
    assert cr.CURRENT.document(CONFIG) == {
        "current_context": "prod",
        "config_file": str(CONFIG.path),
    }
    assert list(cr.CURRENT.view(CONFIG, 100)) == [Line("prod")]
    assert list(cr.CURRENT.view(Config(CONFIG.path, False), 100)) == []
    switch = cr.Switch("lab", CONFIG)
    assert cr.SWITCHED.document(switch) == {
        "current_context": "lab",
        "previous": "prod",
        "config_file": str(CONFIG.path),
    }
    assert list(cr.SWITCHED.view(switch, 100)) == [
        Line(f"switched to context lab (in {CONFIG.path})")
    ]
