"""The verdict itself, pure: a consumer's facts (``XINFO CONSUMERS``, what the caller read of
its PEL) and the signals handed in as callables become ``active``, ``idle``,
``dead-suspect`` or ``unknown`` with a reason token (:func:`judge_group`). The rules are in
the package's docstring (:mod:`pelctl.core.liveness`); the I/O that feeds them is in
:mod:`pelctl.core.liveness.signals`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.redis.capabilities import Capabilities

DEFAULT_DEAD_AFTER_MS = 300_000
# "active" means it read (7.2+: tried to read) within a minute, or within --dead-after when
# that is shorter: a short --dead-after is never overruled by this window.
ACTIVE_MS = 60_000

ACTIVE, IDLE, DEAD_SUSPECT, UNKNOWN = "active", "idle", "dead-suspect", "unknown"
VERDICTS = (ACTIVE, IDLE, DEAD_SUSPECT, UNKNOWN)

# verdict_reason tokens (docs/getting-started.md lists them). A reason is one token, or the
# main token and a comma and a token saying which signal was missing.
LOCK_HELD = "lock-held"  # a --lock-key of one of its entries exists
CLIENT_CONNECTED = "client-connected"  # CLIENT LIST: a client named like the consumer
RECENT_READ = "recent-read"  # read (or was handed entries) within the active window
POLLING = "polling"  # 7.2+: tries to read, nothing read for --dead-after
QUIET = "quiet"  # no read (7.2+: no read attempt) for a while, less than --dead-after
RECENT_DELIVERY = "recent-delivery"  # an entry of its PEL was delivered within --dead-after
INACTIVE_OVER = "inactive-over-threshold"  # 7.2+: holds entries, no read attempt for long
HOLDS_NOTHING = "inactive-holds-nothing"  # 7.2+: no read attempt for long, holds nothing
PEERS_CONNECTED = "no-client-peers-connected"  # its peers have named clients, it has none
BLOCKED_READER = "blocked-reader"  # 7.2+: a client blocked in XREADGROUP since its last try
NO_SIGNAL = "no-signal-below-7.2"  # < 7.2: quiet, and no signal either way
CLIENT_LIST_DENIED = "client-list-denied"  # CLIENT LIST refused by the ACL
CLIENT_LIST_UNAVAILABLE = "client-list-unavailable"  # CLIENT LIST failed otherwise

# How far (ms) a blocked client's CLIENT LIST idle (whole seconds, rounded down) may be from
# a consumer's idle for the client to count as that consumer's BLOCK 0 read.
BLOCKED_MATCH_MS = 1_500
# Lock keys probed per undecided consumer, and per call in all.
LOCK_PROBES_PER_CONSUMER = 16
LOCK_PROBES_MAX = 512


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: str  # active | idle | dead-suspect | unknown
    reason: str


@dataclass(frozen=True, slots=True)
class ConsumerFacts:
    """What ``XINFO CONSUMERS`` (and the PEL already read) says about one consumer."""

    name: bytes
    pending: int
    idle_ms: int
    inactive_ms: int | None = None  # 7.2+; -1 or None: never read
    fresh_delivery: bool | None = None  # an entry delivered within dead-after; None: unknown


@dataclass(frozen=True)
class Clients:
    """What one ``CLIENT LIST`` said; ``missing`` names why it could not be read."""

    names: frozenset[bytes] = frozenset()
    blocked_readers: tuple[tuple[bytes, int], ...] = ()  # (name, idle s) blocked in XREADGROUP
    missing: str | None = None


LockProbe = Callable[[Sequence[ConsumerFacts]], set[bytes]]
ClientsProbe = Callable[[], Clients]


def is_modern(caps: Capabilities) -> bool:
    """7.2 semantics of ``idle`` and ``inactive`` (Redis 7.2+, Valkey)."""
    return caps.has("consumer_inactive")


def judge_group(
    consumers: Sequence[ConsumerFacts],
    *,
    modern: bool,
    dead_after_ms: int,
    locks: LockProbe | None = None,
    clients: ClientsProbe | None = None,
    peers: Iterable[bytes] = (),
) -> dict[bytes, Judgement]:
    """The verdict of every consumer in ``consumers`` (see the module docstring);
    ``peers``: the names of the group's other consumers, when only some are judged."""
    out: dict[bytes, Judgement] = {}
    undecided: list[ConsumerFacts] = []
    for c in consumers:
        first = _from_idle(c, modern, dead_after_ms)
        if first is None:
            undecided.append(c)
        else:
            out[c.name] = first
    if undecided and locks is not None:
        holding = [c for c in undecided if c.pending > 0]
        held = locks(holding) if holding else set()
        for c in undecided:
            if c.name in held:
                out[c.name] = Judgement(ACTIVE, LOCK_HELD)
        undecided = [c for c in undecided if c.name not in out]
    if not undecided:
        return out
    view = clients() if clients is not None else None
    names = {c.name for c in consumers} | set(peers)
    connected = set() if view is None or view.missing else (names & view.names)
    # A blocked client named like one of the group's consumers is that consumer's read.
    blocked = [s for n, s in view.blocked_readers if n not in names] if view is not None else []
    for c in undecided:
        out[c.name] = _from_clients(c, modern, view, connected, blocked)
    return out


def _from_idle(c: ConsumerFacts, modern: bool, dead_after_ms: int) -> Judgement | None:
    recent = min(ACTIVE_MS, dead_after_ms)
    if modern:
        if c.idle_ms < recent:
            inactive = c.inactive_ms
            if inactive is not None and 0 <= inactive < dead_after_ms:
                return Judgement(ACTIVE, RECENT_READ)
            return Judgement(ACTIVE, POLLING)
        if c.idle_ms < dead_after_ms:
            return Judgement(IDLE, QUIET)
        if c.pending == 0:
            return Judgement(IDLE, HOLDS_NOTHING)
        return None
    # Below 7.2 idle is refreshed only by a read or claim that returned entries: a small
    # idle is proof of life, a large one proves nothing.
    if c.idle_ms < recent:
        return Judgement(ACTIVE, RECENT_READ)
    if c.idle_ms < dead_after_ms:
        return Judgement(IDLE, QUIET)
    if c.fresh_delivery:
        return Judgement(ACTIVE, RECENT_DELIVERY)
    return None


def _from_clients(
    c: ConsumerFacts,
    modern: bool,
    view: Clients | None,
    connected: set[bytes],
    blocked: Sequence[int],
) -> Judgement:
    missing = view.missing if view is not None else None
    if c.name in connected:
        return Judgement(ACTIVE, CLIENT_CONNECTED)
    if connected - {c.name}:
        # The group's workers name their connections after their consumer, and none is
        # connected under this one's name.
        return Judgement(DEAD_SUSPECT if c.pending else IDLE, PEERS_CONNECTED)
    if modern:
        # CLIENT LIST does not say which consumer a blocked client reads as: any client
        # blocked since about this consumer's last attempt may be its BLOCK 0 read, so it is
        # not called dead (two consumers gone quiet the same second both stay unknown).
        if any(abs(idle_s * 1000 - c.idle_ms) <= BLOCKED_MATCH_MS for idle_s in blocked):
            return Judgement(UNKNOWN, BLOCKED_READER)
        return Judgement(DEAD_SUSPECT, _with(INACTIVE_OVER, missing))
    return Judgement(UNKNOWN, _with(NO_SIGNAL, missing))


def _with(reason: str, missing: str | None) -> str:
    return f"{reason},{missing}" if missing else reason
