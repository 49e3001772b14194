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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pelctl.redis.replies import rows

if TYPE_CHECKING:  # pragma: no cover
    from pelctl.redis.connection import Connection

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


def is_modern(caps: object) -> bool:
    """7.2 semantics of ``idle`` and ``inactive`` (Redis 7.2+, Valkey)."""
    return bool(caps.has("consumer_inactive"))  # type: ignore[attr-defined]


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


# -- the signals that need I/O ----------------------------------------------------------------


def parse_client_list(reply: bytes | str) -> Clients:
    """``CLIENT LIST`` text: every client name, and the name and idle seconds of each client
    blocked in ``XREADGROUP``."""
    text = reply.encode() if isinstance(reply, str) else bytes(reply)
    names: set[bytes] = set()
    blocked: list[tuple[bytes, int]] = []
    for line in text.splitlines():
        fields: dict[bytes, bytes] = {}
        for part in line.split(b" "):
            key, sep, value = part.partition(b"=")
            if sep:
                fields[key] = value
        name = fields.get(b"name", b"")
        if name:
            names.add(name)
        reading = b"b" in fields.get(b"flags", b"") and fields.get(b"cmd") == b"xreadgroup"
        if reading:
            try:
                blocked.append((name, int(fields.get(b"idle", b"0"))))
            except ValueError:
                pass
    return Clients(frozenset(names), tuple(blocked))


def read_clients(raw: object) -> Clients:
    """One ``CLIENT LIST TYPE normal`` on ``raw`` (the node that owns the stream). An ACL
    refusal or an unknown command is an absent signal, not an error."""
    import redis.exceptions as rex

    try:
        reply = raw.execute_command("CLIENT", "LIST", "TYPE", "normal")  # type: ignore[attr-defined]
    except rex.NoPermissionError:
        return Clients(missing=CLIENT_LIST_DENIED)
    except rex.ResponseError as err:
        if str(err).upper().startswith("NOPERM"):
            return Clients(missing=CLIENT_LIST_DENIED)
        return Clients(missing=CLIENT_LIST_UNAVAILABLE)
    return parse_client_list(reply)


def clients_once(conn: Connection, stream: bytes) -> ClientsProbe:
    """A ``clients`` callable that sends ``CLIENT LIST`` (to the node that owns ``stream``)
    the first time it is called and answers from memory afterwards."""
    raw = conn.raw(stream)
    seen: list[Clients] = []

    def probe() -> Clients:
        if not seen:
            seen.append(read_clients(raw))
        return seen[0]

    return probe


def lock_probe(
    conn: Connection,
    stream: bytes,
    group: bytes,
    pattern: str,
    candidates: Mapping[bytes, Sequence[bytes]] | None = None,
) -> LockProbe:
    """A ``locks`` callable for :func:`judge_group`: which consumers hold a lock key for one
    of their entries. ``candidates``: per consumer, entry ids already read (its newest first:
    a worker's entry in flight is usually its newest); a consumer without any gets its lowest
    ids from one bounded ``XPENDING ... COUNT n consumer``. At most ``LOCK_PROBES_MAX`` keys,
    one pipeline."""
    from pelctl.core.locks import lock_key
    from pelctl.redis.errors import redis_errors

    def probe(consumers: Sequence[ConsumerFacts]) -> set[bytes]:
        budget = LOCK_PROBES_MAX
        per: dict[bytes, list[bytes]] = {}
        need = []
        for c in consumers:
            ids = list((candidates or {}).get(c.name, ()))[:LOCK_PROBES_PER_CONSUMER]
            if ids:
                per[c.name] = ids
            else:
                need.append(c.name)
        raw = conn.raw(stream)
        if need:
            with redis_errors("XPENDING"):
                pipe = raw.pipeline(transaction=False)
                for name in need:
                    pipe.execute_command(
                        "XPENDING", stream, group, "-", "+", LOCK_PROBES_PER_CONSUMER, name
                    )
                for name, rows in zip(need, pipe.execute(), strict=True):
                    per[name] = [bytes(r[0]) for r in rows]
        keys: list[tuple[bytes, bytes]] = []
        for name, ids in per.items():
            for entry_id in ids:
                if budget <= 0:
                    break
                keys.append((name, lock_key(pattern, stream, group, entry_id, name)))
                budget -= 1
        if not keys:
            return set()
        with redis_errors("EXISTS"):
            pipe = conn.client.pipeline(transaction=False)
            for _name, key in keys:
                pipe.exists(key)
            found = pipe.execute()
        return {name for (name, _key), n in zip(keys, found, strict=True) if n}

    return probe


def consumer_facts(rows: Iterable[Mapping[bytes, object]]) -> list[ConsumerFacts]:
    """``XINFO CONSUMERS`` rows (field maps) as facts."""
    out = []
    for row in rows:
        inactive = row.get(b"inactive")
        out.append(
            ConsumerFacts(
                name=row[b"name"],  # type: ignore[arg-type]
                pending=int(row[b"pending"]),  # type: ignore[call-overload]
                idle_ms=int(row[b"idle"]),  # type: ignore[call-overload]
                inactive_ms=int(inactive) if inactive is not None else None,  # type: ignore[call-overload]
            )
        )
    return out


def group_verdicts(
    conn: Connection,
    stream: bytes,
    group: bytes,
    *,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    lock_key: str | None = None,
    rows: Iterable[Mapping[bytes, object]] | None = None,
    clients: ClientsProbe | None = None,
) -> dict[bytes, tuple[ConsumerFacts, Judgement]]:
    """Every consumer of ``stream``/``group`` with its verdict, for callers that have not
    read the PEL: one ``XINFO CONSUMERS`` (unless ``rows`` are given), then lock keys and one
    ``CLIENT LIST`` (``clients``, to share one between calls) only if some consumer is still
    undecided."""
    facts = consumer_facts(_consumer_rows(conn, stream, group) if rows is None else rows)
    judged = judge_group(
        facts,
        modern=is_modern(conn.caps),
        dead_after_ms=dead_after_ms,
        locks=lock_probe(conn, stream, group, lock_key) if lock_key else None,
        clients=clients or clients_once(conn, stream),
    )
    return {c.name: (c, judged[c.name]) for c in facts}


def target_verdict(
    conn: Connection,
    stream: bytes,
    group: bytes,
    target: bytes,
    *,
    dead_after_ms: int = DEFAULT_DEAD_AFTER_MS,
    lock_key: str | None = None,
    rows: Iterable[Mapping[bytes, object]] | None = None,
    clients: ClientsProbe | None = None,
) -> Judgement | None:
    """The verdict of a consumer about to be given entries (claim ``--to``, the reclaim
    loop, prune ``--reassign-to``), judged as if it held some, so that one holding nothing
    yet is judged on its liveness too (``dead-suspect`` rather than ``idle``). None when it
    is not a consumer of the group (the first claim creates it)."""
    from dataclasses import replace

    facts = consumer_facts(_consumer_rows(conn, stream, group) if rows is None else rows)
    mine = [replace(c, pending=max(c.pending, 1)) for c in facts if c.name == target]
    if not mine:
        return None
    names = [c.name for c in facts]
    judged = judge_group(
        mine,
        modern=is_modern(conn.caps),
        dead_after_ms=dead_after_ms,
        locks=lock_probe(conn, stream, group, lock_key) if lock_key else None,
        clients=clients or clients_once(conn, stream),
        peers=[n for n in names if n != target],
    )
    return judged[target]


def _consumer_rows(conn: Connection, stream: bytes, group: bytes) -> list[dict[bytes, object]]:
    from pelctl.redis.errors import redis_errors

    with redis_errors("XINFO CONSUMERS"):
        reply = conn.raw(stream).execute_command("XINFO", "CONSUMERS", stream, group)
    return rows(reply)


# -- what a consumer does with entries claimed to it ---------------------------------------------


def claim_warnings(plan: object, *, applied: bool, target: Judgement | None = None) -> list[str]:
    """What ``pelctl claim`` says on stderr (and in JSON ``warnings``), in the dry run and
    after applying: claimed entries are delivered only when the target's worker reads its
    own PEL (``XREADGROUP`` with id ``0``), which framework workers rarely do; ``requeue``
    hands entries to any healthy consumer. ``target``: the verdict of the ``--to`` consumer,
    warned about when it is not ``active``."""
    from pelctl.base.binary import escape
    from pelctl.core.cmdline import command_line

    stream, group = plan.stream, plan.group  # type: ignore[attr-defined]
    to = plan.options.to or b""  # type: ignore[attr-defined]
    who = escape(to)
    out: list[str] = []
    if target is not None and target.verdict != ACTIVE:
        if target.verdict == UNKNOWN:
            out.append(f"the liveness of {who} is unknown ({target.reason}): make sure its "
                       "worker is running before giving it entries")  # fmt: skip
        else:
            out.append(f"{who} looks {target.verdict} ({target.reason}): entries claimed to "
                       "it may never be processed")  # fmt: skip
    if applied:
        again = command_line("requeue", [stream, group], [("--consumer", to), "--dry-run"])
        instead = f"to hand them to any healthy consumer: {again}"
    else:
        instead = f"to hand them to any healthy consumer instead: {_requeue_line(plan)}"
    out.append(
        f"claimed entries reach {who} only when its worker reads its own pending entries "
        "(XREADGROUP with id 0). Most framework workers read only new entries: FastStream "
        "never reads its PEL, taskiq only through its own XAUTOCLAIM once they are idle for "
        "its idle_timeout (10m by default; the claim resets idle), others only at start-up. "
        f"Until then the entries wait; {instead}"
    )
    return out


def _requeue_line(plan: object) -> str:
    """The ``requeue`` dry run over what ``plan`` (a claim) targets."""
    from pelctl.core.cmdline import command_line

    t = plan.targets  # type: ignore[attr-defined]
    names: list[bytes | str] = [plan.stream, plan.group]  # type: ignore[attr-defined]
    opts: list[str | tuple[str, bytes | str]] = []
    if t.ids:
        names += list(t.ids)
    if t.consumer is not None:
        opts.append(("--consumer", t.consumer))
    if t.min_idle_ms is not None:
        opts.append(("--idle", _exact_duration(t.min_idle_ms)))
    if t.min_deliveries is not None:
        opts.append(("--min-deliveries", str(t.min_deliveries)))
    if t.below_deliveries is not None:
        opts.append(("--below-deliveries", str(t.below_deliveries)))
    if t.limit is not None:
        opts.append(("--limit", str(t.limit)))
    if t.every:
        opts.append("--all")
    if plan.options.lock_key:  # type: ignore[attr-defined]
        opts.append(("--lock-key", plan.options.lock_key))  # type: ignore[attr-defined]
    return command_line("requeue", names, [*opts, "--dry-run"])


def _exact_duration(ms: int) -> str:
    """``ms`` in the largest unit that keeps it exact (``3600000`` -> ``1h``)."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"
