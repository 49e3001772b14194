"""The CI-sized chaos run (tests/chaos/chaos_run.py): 20,000 messages through workers that
SIGKILL themselves, a ``pelctl reclaim`` runner SIGKILLed and restarted every 1-3 s, and one
redis-server SIGKILL + restart (AOF, appendfsync always). Zero lost; duplicates reported."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import pytest

from tests.chaos.chaos_run import ChaosConfig, run_chaos
from tests.topologies.conftest import need

pytestmark = pytest.mark.slow

MESSAGES = int(os.environ.get("PELCTL_CHAOS_MESSAGES", "20000"))
FIGURES: dict[str, object] = {}


def test_chaos_zero_lost():
    need("redis-server")
    res = run_chaos(ChaosConfig(messages=MESSAGES))
    FIGURES.update(asdict(res))
    print("\nchaos:", res.summary())
    print(json.dumps(asdict(res)))
    assert res.drained, f"not drained within the time limit: {res.summary()}"
    assert res.produced == MESSAGES
    assert res.lost == 0, f"lost messages, e.g. {res.lost_sample}: {res.summary()}"
    assert res.bad_envelopes == 0
    assert res.poison_dead_lettered == res.poison  # every poison message is in the DLQ
    # The chaos really happened.
    assert res.worker_kills > 0 and res.reclaim_kills > 0 and res.redis_restarts == 1
    assert res.requeued_copies > 0  # crashed workers' entries went back via pelctl reclaim
