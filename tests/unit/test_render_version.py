"""pelctl/render/version.py: ``pelctl version`` as a document and lines (no server)."""

from __future__ import annotations

from pelctl.render import version as vr
from pelctl.render.protocol import Pairs

LOCAL = vr.Versions("0.2.0", "3.11.7", "7.0.1", None)
SERVER = vr.Server("redis://:***@h:6379/0", "redis 7.0.15", False, {"xautoclaim": True})


def test_without_a_server() -> None:
    assert vr.VERSION.document(LOCAL) == {
        "pelctl": "0.2.0",
        "python": "3.11.7",
        "redis-py": "7.0.1",
        "hiredis": None,
    }
    assert list(vr.VERSION.view(LOCAL, 100)) == [
        Pairs(
            [("pelctl", "0.2.0"), ("python", "3.11.7"), ("redis-py", "7.0.1"), ("hiredis", "None")]
        )
    ]


def test_with_the_server() -> None:
    versions = vr.Versions("0.2.0", "3.11.7", "7.0.1", "3.1.0", SERVER)
    doc = vr.VERSION.document(versions)
    assert {k: doc[k] for k in ("server", "server_version", "cluster", "features")} == {
        "server": "redis://:***@h:6379/0",
        "server_version": "redis 7.0.15",
        "cluster": False,
        "features": {"xautoclaim": True},
    }
    (pairs,) = vr.VERSION.view(versions, 100)
    assert isinstance(pairs, Pairs)
    assert list(pairs.pairs)[4:] == [
        ("server", "redis 7.0.15 at redis://:***@h:6379/0"),
        ("cluster", "no"),
        ("  xautoclaim", "yes"),
    ]
