"""Is a consumer alive? The one decision every surface shows: ``inspect`` and its advice,
the dashboard, ``consumers prune``, the reclaim loop's ``--to`` target, ``snapshot`` and
``analyze``.

What ``XINFO CONSUMERS`` says depends on the server (docs/getting-started.md, "Verdicts"):

- Redis 7.2+ and Valkey (capability ``consumer_inactive``): ``idle`` is the time since the
  consumer last *tried* to read (every ``XREADGROUP`` refreshes it, even one that returns
  nothing, and a polling worker keeps it near zero); ``inactive`` is the time since it last
  read or claimed something. A consumer that holds entries and has not even tried to read
  for ``--dead-after`` is a dead suspect.
- Below 7.2 ``idle`` is refreshed only by a read (or claim) that returns entries: a live
  worker blocked in ``XREADGROUP`` on a quiet stream looks exactly like a dead one. There
  idle alone never makes a consumer dead: without another signal its liveness is
  ``unknown``.

The other signals, cheapest first: an entry of its PEL delivered within ``--dead-after``
(from data the caller already read), a held ``--lock-key`` of one of its entries, and one
``CLIENT LIST`` per call (a connected client named like the consumer is alive; when the
group's other consumers have such clients and this one has none, that is evidence of its
death; on 7.2+ a client blocked in ``XREADGROUP`` since about its last read attempt is a
``BLOCK 0`` worker, so not dead). ``CLIENT LIST`` denied by an ACL (or missing on a managed
service) is an absent signal, said in the reason, never an error.

``judge_group`` is pure: the I/O (lock keys, ``CLIENT LIST``) comes in as callables, called
only when some consumer is still undecided, at most once each. ``group_verdicts`` is the
whole thing over a connection for callers that have not read the PEL (prune);
``target_verdict`` judges a consumer about to be given entries (claim ``--to``, the reclaim
loop, prune ``--reassign-to``). ``inspect`` feeds ``judge_group`` from its own scan.

The modules: :mod:`~pelctl.core.liveness.verdict` (the pure decision, its reason tokens)
and :mod:`~pelctl.core.liveness.signals` (``CLIENT LIST``, lock keys, ``XINFO CONSUMERS``;
``group_verdicts``, ``target_verdict``). What ``pelctl claim`` warns about its target is
advice (:func:`pelctl.core.advice.claim_warnings`). This package re-exports their public
names (``from pelctl.core import liveness``; ``liveness.judge_group``, ...); pelctl's own
modules import from the module that defines a name.
"""

from __future__ import annotations

from pelctl.core.liveness.signals import (
    clients_once,
    consumer_facts,
    group_verdicts,
    lock_probe,
    parse_client_list,
    read_clients,
    target_verdict,
)
from pelctl.core.liveness.verdict import (
    ACTIVE,
    ACTIVE_MS,
    BLOCKED_MATCH_MS,
    BLOCKED_READER,
    CLIENT_CONNECTED,
    CLIENT_LIST_DENIED,
    CLIENT_LIST_UNAVAILABLE,
    DEAD_SUSPECT,
    DEFAULT_DEAD_AFTER_MS,
    HOLDS_NOTHING,
    IDLE,
    INACTIVE_OVER,
    LOCK_HELD,
    LOCK_PROBES_MAX,
    LOCK_PROBES_PER_CONSUMER,
    NO_SIGNAL,
    PEERS_CONNECTED,
    POLLING,
    QUIET,
    RECENT_DELIVERY,
    RECENT_READ,
    UNKNOWN,
    VERDICTS,
    Clients,
    ClientsProbe,
    ConsumerFacts,
    Judgement,
    LockProbe,
    is_modern,
    judge_group,
)

__all__ = [
    "ACTIVE",
    "ACTIVE_MS",
    "BLOCKED_MATCH_MS",
    "BLOCKED_READER",
    "CLIENT_CONNECTED",
    "CLIENT_LIST_DENIED",
    "CLIENT_LIST_UNAVAILABLE",
    "Clients",
    "ClientsProbe",
    "ConsumerFacts",
    "DEAD_SUSPECT",
    "DEFAULT_DEAD_AFTER_MS",
    "HOLDS_NOTHING",
    "IDLE",
    "INACTIVE_OVER",
    "Judgement",
    "LOCK_HELD",
    "LOCK_PROBES_MAX",
    "LOCK_PROBES_PER_CONSUMER",
    "LockProbe",
    "NO_SIGNAL",
    "PEERS_CONNECTED",
    "POLLING",
    "QUIET",
    "RECENT_DELIVERY",
    "RECENT_READ",
    "UNKNOWN",
    "VERDICTS",
    "clients_once",
    "consumer_facts",
    "group_verdicts",
    "is_modern",
    "judge_group",
    "lock_probe",
    "parse_client_list",
    "read_clients",
    "target_verdict",
]
