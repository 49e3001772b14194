"""Script rounds sent ahead (:class:`pelctl.redis.scripts.Wire`): the server runs
the next round while Python parses the last; answers keep their order, a flushed script
cache costs nothing twice, an interrupt accounts for every entry and leaves no half-read
connection in the pool."""

from __future__ import annotations

import hashlib
import time

from pelctl.core import mutations as m
from pelctl.redis.scripts import Call, Script, Wire, script
from tests.integration.repair_support import HOUR, G, S, entries, fields_of, incident, pel, raw

IDLE = m.Targets(min_idle_ms=HOUR // 2)

_COUNTING = b"return {redis.call('INCR', KEYS[1]), ARGV[1]}"
COUNTING = Script("counting", _COUNTING, hashlib.sha1(_COUNTING).hexdigest())


def copies_of(r) -> dict[bytes, int]:
    """original id -> how many requeued copies carry it."""
    copies: dict[bytes, int] = {}
    for _id, flat in entries(r, S):
        original = fields_of(flat).get(b"_original_id")
        if original is not None:
            copies[original] = copies.get(original, 0) + 1
    return copies


def evalsha_calls(r) -> int:
    return int(r.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


def test_rounds_out_together_answer_in_order_after_a_script_flush(r) -> None:
    """Two rounds on the wire before any answer, the script unknown to the server: each
    call runs exactly once and each round gets its own answers, in order."""
    r.script_flush()
    with Wire(raw(r)) as wire:
        wire.send([Call(COUNTING, (b"n",), (b"a%d" % i,)) for i in range(3)])
        wire.send([Call(COUNTING, (b"n",), (b"b%d" % i,)) for i in range(2)])
        first, second = wire.receive(), wire.receive()
    assert [reply[1] for reply in first] == [b"a0", b"a1", b"a2"]  # type: ignore[index]
    assert [reply[1] for reply in second] == [b"b0", b"b1"]  # type: ignore[index]
    assert sorted(reply[0] for reply in first + second) == [1, 2, 3, 4, 5]  # type: ignore[index]
    assert r.get(b"n") == b"5"
    assert raw(r).execute_command("PING") == b"PONG"  # the pool's connection is clean


def test_the_next_round_is_on_the_server_while_answers_are_parsed(r, conn) -> None:
    """While the CLI shows progress for round k, round k+1 has already reached the server
    (each round used to be sent only once the last one was parsed): the server has added
    more requeued copies than the answers parsed so far report."""
    incident(r, dead=2_000, alive=0)
    plan = m.plan(conn, "requeue", S, G, IDLE)
    script("requeue").load(raw(r))  # no NOSCRIPT answer among the calls counted
    before = r.xlen(S)
    seen: list[tuple[int, int]] = []
    rounds = [0]

    def progress(done: int, total: int) -> None:
        rounds[0] += 1
        # (The first round goes alone: a script the server lacks is loaded once.)
        if rounds[0] > 1 and done < total - 200 and len(seen) < 3:
            deadline = time.monotonic() + 30
            while r.xlen(S) - before <= done:
                assert time.monotonic() < deadline, f"no round ahead after {done} entries"
                time.sleep(0.001)
            seen.append((done, r.xlen(S) - before))

    result = m.apply(conn, plan, progress=progress, batch_size=50)
    assert result.applied == 2_000 and len(seen) == 3


def test_an_interrupt_with_rounds_out_accounts_for_every_entry(r, conn) -> None:
    """Ctrl-C with a round still out: every planned entry is reported once; each requeued
    one has exactly one copy, each interrupted one is still pending or has exactly one copy
    (its round ran); the pool's connection is not reused half-read, so the next requeue
    on the same connection finishes the rest."""
    stuck, _ = incident(r, dead=1_000, alive=0)
    plan = m.plan(conn, "requeue", S, G, IDLE)
    calls = [0]

    def progress(done: int, total: int) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt

    result = m.apply(conn, plan, progress=progress, batch_size=50)
    assert result.interrupted
    ids = [i.id for i in result.items]
    assert sorted(ids) == sorted(stuck)  # each once
    copies = copies_of(r)
    pending = pel(r)
    outcomes = {i.id: i.outcome for i in result.items}
    assert set(outcomes.values()) <= {"requeued", "interrupted"}
    for entry_id in stuck:
        assert (entry_id in pending) != (copies.get(entry_id) == 1), entry_id
        assert copies.get(entry_id, 0) <= 1
        if outcomes[entry_id] == "requeued":
            assert entry_id not in pending
    assert any(o == "requeued" for o in outcomes.values())
    assert any(o == "interrupted" for o in outcomes.values())
    rest = m.apply(conn, m.plan(conn, "requeue", S, G, IDLE), batch_size=50)
    assert rest.applied == len(pending) and not rest.failed
    assert not pel(r)
    assert sorted(copies_of(r)) == sorted(stuck) and set(copies_of(r).values()) == {1}
