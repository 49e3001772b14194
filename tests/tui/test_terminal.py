"""The installed ``pelctl tui`` in a real terminal (tmux): keys in, screen text out with
``capture-pane``, and a requeue done through the modal that changes the server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.state import assert_unchanged, snapshot
from tests.support.tmux import Tmux
from tests.support.tools import need_binary

PELCTL = Path(sys.executable).parent / "pelctl"


@pytest.fixture(autouse=True)
def _tmux() -> None:
    need_binary("tmux")


def open_terminal(command: str, env: dict[str, str], size: tuple[int, int] = (150, 45)) -> Tmux:
    """The dashboard in a terminal; it stays on screen a while after it exits."""
    return Tmux(f"{command}; sleep 30", size=size, env=env)


@pytest.fixture
def terminal(demo, tmp_path):
    terms: list[Tmux] = []

    def start(*args: str) -> Tmux:
        env = {
            "PELCTL_URL": demo.url,
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "TERM": "xterm-256color",
            "PELCTL_THEME": "dark",
        }
        term = open_terminal(f"{PELCTL} tui {' '.join(args)}", env)
        terms.append(term)
        return term

    yield start
    for term in terms:
        term.close()


def test_pelctl_tui_in_a_real_terminal_requeues_through_the_modal(terminal, r, tmp_path):
    term = terminal("--refresh", "1s")
    screen = term.wait_text("Streams (6)", "orders", "{payments}", "legacy", "1,2")
    assert "orders:dlq" in screen
    # legacy, notifications, orders: two rows down, enter -> the group picker (3 groups)
    term.keys("Down", "Down", "Enter")
    screen = term.wait_text("Groups of orders", "billing", "shipping", "analytics")
    term.keys("Enter")  # billing: the most pending, listed first
    screen = term.wait_text(  # Redis 7.0 without a signal: billing-2's liveness is unknown
        "unknown", "billing-2", "billing-1", "billing-3", "1,210", "Stuck entries"
    )
    assert "8 delivered 5+ times" in screen

    before = r.xpending("orders", "billing")
    held = {c["name"]: c["pending"] for c in before["consumers"]}
    assert held[b"billing-2"] == 1_210
    term.keys("r")  # requeue the entry under the cursor: the most idle one
    screen = term.wait_text("requeue 1 entry of orders/billing held by billing-2", "Apply to 1")
    term.keys("y")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        after = {c["name"]: c["pending"] for c in r.xpending("orders", "billing")["consumers"]}
        if after.get(b"billing-2") == 1_209:
            break
        time.sleep(0.2)
    assert after[b"billing-2"] == 1_209
    copies = [f for _id, f in r.xrevrange("orders", count=3) if b"_original_id" in f]
    assert len(copies) == 1 and copies[0][b"_retry_count"] == b"1"
    term.wait_text("1,209")  # the view refreshed after the action
    audit = (tmp_path / "state" / "pelctl" / "audit.jsonl").read_text()
    assert '"surface":"tui"' in audit and '"action":"requeue"' in audit
    term.keys("q")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "Stuck entries" in term.screen():
        time.sleep(0.2)
    assert "Stuck entries" not in term.screen()


def test_pelctl_tui_k9s_keys_in_a_real_terminal(terminal):
    """k9s habits: j/k/g/G move the cursor (what enter opens proves where it is), /ord + enter
    leaves the cursor on orders, :dlq jumps to the stream's dead letters, esc comes back."""
    term = terminal("--read-only")
    term.wait_text("Streams (6)", "{payments}:dlq", "1,2")
    # legacy, notifications, orders, orders:dlq, {payments}, {payments}:dlq
    term.keys("j", "j", "k", "Enter")  # notifications: no group, a warning
    term.wait_text("notifications has no consumer")  # (the toast wraps at 80 columns)
    term.keys("G", "Enter")  # the last row: a dead-letter stream
    term.wait_text("Dead letters in {payments}:dlq")
    term.keys("Escape")
    term.wait_text("Streams (6)")
    term.keys("g", "Enter")  # the first row: legacy, one group
    term.wait_text("legacy › import")
    term.keys("Escape")
    term.wait_text("Streams (6)")
    term.keys("j", "/")  # the cursor was on notifications
    term.wait_text("filter stream names")  # the box has the focus: type into it
    term.keys("o", "r", "d", "Enter")
    term.wait_text("Streams (2 of 6)")
    term.keys("Enter")  # orders, the first match (not orders:dlq)
    term.wait_text("Groups of orders", "billing", "shipping")
    term.keys("Enter")
    term.wait_text("orders › billing", "Stuck entries")
    term.keys("j", "j", "G", "g")  # the stuck entries: still the group view
    term.keys(":")
    term.wait_text(":streams  :stream NAME")
    term.keys("d", "l", "q", "Enter")
    term.wait_text("Dead letters in orders:dlq", "orders › DLQ orders:dlq", "billing-2")
    term.keys("Escape")
    term.wait_text("orders › billing", "Stuck entries")


def test_pelctl_tui_opens_a_group_directly_read_only(terminal, r, demo):
    term = terminal("orders", "billing", "--read-only")
    screen = term.wait_text("READ-ONLY", "billing-2", "1 unknown")
    before = snapshot(demo)
    footer = screen.strip().splitlines()[-1]
    assert "Filter" in footer and "Requeue" not in footer and "Claim" not in footer
    # r and a do nothing; the help opened by the ? typed after them proves they were read
    term.keys("r", "a", "?")
    screen = term.wait_text("Keys:")
    assert "Apply to" not in screen
    term.keys("Escape")
    screen = term.wait_gone("Keys:")
    assert "Apply to" not in screen and "READ-ONLY" in screen
    assert_unchanged(before, demo, what="r and a in a read-only tui")


def test_pelctl_tui_without_a_terminal_says_so(demo):
    out = subprocess.run(
        [str(PELCTL), "tui"],
        capture_output=True,
        text=True,
        env={**os.environ, "PELCTL_URL": demo.url},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("error: pelctl tui needs a terminal")
    assert "Traceback" not in out.stderr
