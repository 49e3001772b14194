"""Idempotent copies on the ordered path (a dead letter in another cluster slot, forced
here on one server; an entry too wide for a script). A run that stops after writing the
copies and before acknowledging them leaves the entries pending with a copy written; the
rerun writes them again. On Redis 8.6 each copy carries ``IDMP <producer> <id from the
source entry>``, so the server refuses the second write: 0 doubled. On 7.0 the rerun
duplicates them, as documented (never loses one)."""

from __future__ import annotations

from collections import Counter

import pytest
import redis.exceptions as rex

from pelctl.demo import scenario as sc
from pelctl.redis import scripts

HOUR = 3_600_000


def build(r, n: int) -> list[bytes]:
    ids = sc.add_entries(r, b"s", n, {b"n": b"x"})
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"dead", n)
    sc.set_idle(r, b"s", b"g", b"dead", ids, HOUR)
    return ids


def dead_letters(r) -> Counter:
    return Counter(f[b"_dlq_id"] for _id, f in r.xrange(b"s:dlq"))


def pending(r) -> set[bytes]:
    rows = sc.raw(r).execute_command("XPENDING", b"s", b"g", "-", "+", 10_000)
    return {row[0] for row in rows}


@pytest.fixture
def ack_fails_once(monkeypatch: pytest.MonkeyPatch):
    """The verified acknowledgement of the ordered path fails (the connection drops) the
    first time it is called: the copies of that batch are written, their entries pending."""
    real = scripts.Script.call
    failed: list[str] = []

    def call(self, client, keys, args):
        if self.name == "lease_ack" and not failed:
            failed.append(self.name)
            raise rex.ConnectionError("connection dropped (test)")
        return real(self, client, keys, args)

    monkeypatch.setattr(scripts.Script, "call", call)
    return failed


@pytest.mark.parametrize("n", [60, 450], ids=["one-batch", "batches"])
def test_a_rerun_after_the_copies_were_written_doubles_nothing_on_8_6(
    r, cli, redis_server, monkeypatch, ack_fails_once, n
) -> None:
    """``batches``: more entries than the target's window (idmp-maxsize 100): the batches
    hold 100 each and the run stops at the failed acknowledgement, so the rerun still finds
    every copy it had written."""
    monkeypatch.setenv("PELCTL_FORCE_CROSS_SLOT", "1")
    ids = build(r, n)
    args = ("dlq", "move", "s", "g", "--consumer", "dead", "--reason", "idmp", "--yes")
    first = cli(*args, "-o", "json")
    assert ack_fails_once and first.exit_code != 0
    written = set(dead_letters(r))
    assert pending(r) == set(ids)  # nothing acknowledged ...
    assert written == set(ids[: len(written)]) and len(written) == min(n, 100)  # 1st batch
    again = cli(*args, "-o", "json")
    assert again.exit_code == 0, again.stderr
    assert not pending(r)
    letters = dead_letters(r)
    assert set(letters) == set(ids)  # nothing lost
    doubled = sum(n - 1 for n in letters.values())
    if redis_server.version == "8.6":
        assert doubled == 0
        info = sc.raw(r).execute_command("XINFO", "STREAM", b"s:dlq")
        fields = dict(zip(info[::2], info[1::2], strict=True))
        assert fields[b"iids-duplicates"] == len(written)  # each second write refused
        assert fields[b"idmp-duration"] == 100 and fields[b"idmp-maxsize"] == 100  # untouched
    else:
        assert doubled == len(written)  # no IDMP: a crash between the two steps duplicates
