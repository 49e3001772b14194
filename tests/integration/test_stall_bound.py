"""What other clients wait behind a repair is bounded (pelctl/redis/scripts.py, ``Pacer``):
pipelines hold as many script calls as the stall bound allows, measured on the server's own
answers; rounds sent ahead never hold more than two rounds; every entry is still settled
exactly once (docs/server-budget.md). Structure, not timing: the counts of calls per
pipeline, the rounds out, the entries per call."""

from __future__ import annotations

import hashlib

from pelctl.core import mutations as m
from pelctl.core.repairs import script_rounds as run_module
from pelctl.redis.scripts import (
    DEFAULT_BATCH,
    DEFAULT_MAX_STALL_MS,
    Call,
    Pacer,
    Script,
    Wire,
    round_trip,
)
from tests.integration.repair_support import HOUR, G, S, incident, pel, raw


def busy(name: str, lua: str) -> Script:
    body = lua.encode()
    return Script(name, body, hashlib.sha1(body).hexdigest())


# A script whose server time is set by its argument: a Lua loop.
LOOP = busy("loop", "local n = 0 for i = 1, tonumber(ARGV[1]) do n = n + 1 end return n")


def test_a_dear_script_goes_one_call_a_pipeline_a_cheap_one_many(r) -> None:
    client = raw(r)
    # About 10 ms each on this kind of machine (anything above the 3 ms round target does).
    dear = [Call(LOOP, (b"k",), (1_000_000,)) for _ in range(6)]
    pacer = Pacer(rounds_out=1, max_depth=16)
    assert round_trip(client, dear, pacer=pacer) == [1_000_000] * 6
    assert pacer.stats.max_round_calls == 1 and pacer.stats.rounds == 6
    cheap = [Call(LOOP, (b"k",), (1,)) for _ in range(64)]
    pacer = Pacer(rounds_out=1, max_depth=16)
    assert round_trip(client, cheap, pacer=pacer) == [1] * 64
    # The first call goes alone (its cost is not known yet); then many a pipeline.
    assert pacer.stats.max_round_calls > 1 and pacer.stats.rounds < 64


def test_one_round_on_the_server_the_next_built_ahead_each_measured(r, conn, monkeypatch) -> None:
    """A requeue of 3,000 entries under the default bound: a round is sent only when no other
    runs (the next one is built and packed meanwhile, sent the moment the answers of the
    last start to arrive, alone on the server, so each round trip times the script), calls no bigger
    than the old batch, and every entry requeued exactly once."""
    stuck, _ = incident(r, dead=3_000, alive=0)
    busy_at_send: list[bool] = []  # a round of ours still running when the next was sent
    measured: list[bool] = []
    sent = Wire.send

    def watched(self: Wire, calls, **kwargs) -> None:
        # (A round out whose answers have started to arrive has run.)
        busy_at_send.append(self.rounds_out > 0 and not self.conn.can_read(timeout=0))
        measured.append(kwargs.get("alone") is not False)
        for call in calls:
            assert call.entries is not None and 1 <= call.entries <= DEFAULT_BATCH
        sent(self, calls, **kwargs)

    runs: list[run_module.EntryRun] = []
    made = run_module.EntryRun.__init__

    def keep(self, *args, **kwargs) -> None:
        made(self, *args, **kwargs)
        runs.append(self)

    monkeypatch.setattr(Wire, "send", watched)
    monkeypatch.setattr(run_module.EntryRun, "__init__", keep)
    result = m.apply(conn, m.plan(conn, "requeue", S, G, m.Targets(min_idle_ms=HOUR // 2)))
    assert result.applied == 3_000 and not result.failed
    assert not pel(r) and len(r.xrange(S)) == 3_000 + 5 + 3_000
    assert not any(busy_at_send)  # never two rounds of ours on the server at once
    assert all(measured)
    pacer = runs[0].pacer
    assert pacer.max_stall_ms == DEFAULT_MAX_STALL_MS
    # Sized from the costs measured so far: a round built ahead is cut at sending when a
    # measurement since made it bigger than the target, down to one call, which may carry
    # what the costs known when it was built allowed (so over the target by what one
    # measurement changed, never over the bound).
    assert pacer.stats.max_round_ms <= 2 * pacer.round_ms
    assert pacer.stats.max_stall_ms <= DEFAULT_MAX_STALL_MS
    assert sorted(stuck) == sorted(i.id for i in result.items)


def test_a_lower_bound_means_smaller_calls(r, conn, monkeypatch) -> None:
    """The same requeue under a 2 ms bound and under the default: smaller calls, more of
    them, the same entries settled."""
    calls: dict[float, int] = {}
    for stall_ms, stream in ((2.0, b"low"), (DEFAULT_MAX_STALL_MS, b"default")):
        incident(r, stream, dead=2_000, alive=0)
        runs: list[run_module.EntryRun] = []
        made = run_module.EntryRun.__init__

        def keep(self, *args, made=made, runs=runs, stall_ms=stall_ms, **kwargs) -> None:
            kwargs["max_stall_ms"] = stall_ms
            made(self, *args, **kwargs)
            runs.append(self)

        monkeypatch.setattr(run_module.EntryRun, "__init__", keep)
        plan = m.plan(conn, "requeue", stream, G, m.Targets(min_idle_ms=HOUR // 2))
        assert m.apply(conn, plan).applied == 2_000
        monkeypatch.undo()
        calls[stall_ms] = runs[0].pacer.stats.calls
    assert calls[2.0] > calls[DEFAULT_MAX_STALL_MS] >= 2_000 // DEFAULT_BATCH
