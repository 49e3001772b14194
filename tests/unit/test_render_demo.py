"""pelctl/render/demo.py: ``pelctl demo status`` as a document and lines (no server)."""

from __future__ import annotations

from pelctl.demo.server import DemoState
from pelctl.render.demo import STATUS
from pelctl.render.protocol import Line, Pairs

RUNNING = DemoState(4242, 6499, "/tmp/pelctl-demo", "redis://127.0.0.1:6499/0", 0.0)


def test_running() -> None:
    assert STATUS.document(RUNNING) == {
        "running": True,
        "url": "redis://127.0.0.1:6499/0",
        "pid": 4242,
    }
    assert list(STATUS.view(RUNNING, 100)) == [
        Pairs(
            [
                ("running", "yes"),
                ("url", "redis://127.0.0.1:6499/0"),
                ("pid", "4242"),
                ("dir", "/tmp/pelctl-demo"),
            ]
        )
    ]


def test_not_running() -> None:
    assert STATUS.document(None) == {"running": False, "url": None, "pid": None}
    assert list(STATUS.view(None, 100)) == [Line("not running (start it with: pelctl demo up)")]
