"""The pelctl invocations the hardening suites run, and the scenario they run them on.

The read-only list and the mutation table cover every command of docs/commands.md; ``registered()``
fails if the typer app lacks one of them (or if walking the app finds nothing at all), so
no suite can pass vacuously over an empty list. ``test_every_mutation_is_covered`` fails if
a new mutating command has no entry here, and ``EXPECTED`` says what each mutation does to
the seeded scenario: every loop checks the counts it reports and the server afterwards
(``check_outcome``), never the exit code alone (0 also when nothing matched).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import redis

from pelctl.demo import scenario as sc

HOUR = 3_600_000
STREAM, GROUP = "s", "g"
DLQ = "s:dlq"


def seed(
    client: redis.Redis,
    stream: bytes = b"s",
    dlq: bytes | None = None,
    dlq_client: redis.Redis | None = None,
) -> dict[str, object]:
    """A small incident on one stream: ``dead`` holds 10 entries idle 1h (3 of them delivered
    6 times: poison), ``live`` holds 5 fresh ones, one pending entry was deleted (a ghost),
    and a DLQ with one enveloped entry (written with ``dlq_client`` on a cluster, where it
    may live on another node). Returns the ids."""
    dlq = dlq or stream + b":dlq"
    ids = sc.add_entries(client, stream, 40, {b"order": b"o-1", b"sku": b"SKU-9"})
    sc.create_group(client, stream, b"g")
    dead = sc.deliver(client, stream, b"g", b"dead", 10)
    sc.set_idle(client, stream, b"g", b"dead", dead, HOUR, 2)
    sc.set_idle(client, stream, b"g", b"dead", dead[:3], HOUR, 6)
    live = sc.deliver(client, stream, b"g", b"live", 5)
    raw = sc.raw(client)
    raw.execute_command("XDEL", stream, dead[-1])  # a ghost
    sc.raw(dlq_client or client).execute_command(
        "XADD",
        dlq,
        "*",
        "order",
        "o-0",
        "_dlq_source",
        stream,
        "_dlq_group",
        "g",
        "_dlq_id",
        "1-0",
        "_dlq_owner",
        "dead",
        "_dlq_deliveries",
        "7",
        "_dlq_idle_ms",
        "1",
        "_dlq_reason",
        "poison",
        "_dlq_at",
        "1",
    )
    return {"ids": ids, "dead": dead, "live": live}


# Every command path of the command reference, docs/commands.md (and the admin commands that
# exist). The walk must find
# them all: an empty or partial walk fails here instead of skipping or passing vacuously.
SPEC_COMMANDS = {
    "streams",
    "inspect",
    "pending",
    "histogram",
    "ghosts",
    "trace",
    "find",
    "claim",
    "ack",
    "requeue",
    "dlq move",
    "dlq list",
    "dlq show",
    "dlq stats",
    "dlq replay",
    "dlq purge",
    "consumers prune",
    "trim",
    "reclaim",
    "exporter",
    "tui",
    "snapshot",
    "analyze",
    "demo up",
    "demo down",
    "demo status",
    "apply",
    "audit tail",
    "config path",
    "config show",
    "version",
}


@cache
def registered() -> dict[str, bool]:
    """Every command path of the app (``"dlq move"``) -> whether it mutates (has --dry-run)."""
    import typer.main

    from pelctl.cli.app import app

    out: dict[str, bool] = {}

    def walk(cmd, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
            return
        out[" ".join(path)] = any(p.name == "dry_run" for p in cmd.params)

    walk(typer.main.get_command(app), ())
    missing = SPEC_COMMANDS - set(out)
    assert not missing, f"the command walk did not find {sorted(missing)} (found {sorted(out)})"
    return out


def exists(path: str) -> bool:
    """Whether ``path`` is a command; a documented command that is missing fails in
    registered()."""
    return path in registered()


# Read-only invocations on the seeded scenario (stream s, group g, consumers dead/live).
_READS: list[list[str]] = [
    ["streams"],
    ["streams", "--match", "s*"],
    ["inspect", "s"],
    ["inspect", "s", "--group", "g", "--oldest", "20"],
    ["pending", "s", "g"],
    ["pending", "s", "g", "--all", "--with-payload"],
    ["pending", "s", "g", "--idle", "30m", "--consumer", "dead"],
    ["pending", "s", "g", "--min-deliveries", "5", "--limit", "2"],
    ["histogram", "s", "g"],
    ["histogram", "s", "g", "--by", "deliveries"],
    ["histogram", "s", "g", "--by", "consumer"],
    ["histogram", "s", "g", "--by", "age", "--buckets", "1s,1m,1h"],
    ["ghosts", "s", "g"],
    ["ghosts", "s", "g", "--count", "--full"],
    ["dlq", "list", "s:dlq"],
    ["dlq", "list", "--all"],
    ["dlq", "stats", "s:dlq"],
    ["dlq", "stats"],
    ["trace", "s", "1-0"],
    ["find", "s", "--field", "order=o-1", "--with-dlq", "--trace", "-n", "3"],
    ["find", "s", "--contains", "o-0", "--with-dlq"],
    ["version", "--server"],
    ["exporter", "--once"],
]


def read_invocations() -> list[list[str]]:
    """The read-only invocations (every one's command is registered: checked here)."""
    for args in _READS:
        path = args[0] if args[0] not in ("dlq", "consumers", "audit") else " ".join(args[:2])
        assert exists(path), f"{path} is not registered"
    return [list(a) for a in _READS]


# Every mutating command, with arguments that would change the seeded scenario.
# A key "path#variant" is another invocation of the command "path".
MUTATIONS: dict[str, list[str]] = {
    "claim": ["claim", "s", "g", "--to", "live", "--idle", "30m", "--yes"],
    "ack": ["ack", "s", "g", "--consumer", "dead", "--yes"],
    "requeue": [
        "requeue",
        "s",
        "g",
        "--idle",
        "30m",
        "--lock-key",
        "lock:{stream}:{id}",
        "--yes",
    ],
    "dlq move": ["dlq", "move", "s", "g", "--min-deliveries", "5", "--yes"],
    "dlq replay": ["dlq", "replay", "s:dlq", "--yes"],
    "dlq purge": ["dlq", "purge", "s:dlq", "--all", "--yes"],
    "consumers prune": [
        "consumers",
        "prune",
        "s",
        "g",
        "--inactive",
        "1ms",
        "--reassign-to",
        "fresh",
        "--create-consumer",
        "--assume-dead",
        "--yes",
    ],
    "ghosts": ["ghosts", "s", "g", "--fix", "--yes"],
    # g's oldest pending entry (dead's, the stream's first) holds the trim: nothing goes
    "trim": ["trim", "s", "--safe", "--yes"],
    # the DLQ has no group: --maxlen says what may go
    "trim#no-groups": ["trim", "s:dlq", "--safe", "--maxlen", "0", "--yes"],
    "reclaim": ["reclaim", "s", "--group", "g", "--idle", "30m", "--once"],
    "reclaim#autoclaim": [
        "reclaim",
        "s",
        "--group",
        "g",
        "--idle",
        "30m",
        "--once",
        "--strategy",
        "autoclaim",
        "--max-deliveries",
        "5",
    ],
    "apply": ["apply", "{plan}", "--yes"],  # {plan}: made by prepare() with --plan-out
}


def prepare(args: list[str], admin_url: str, workdir: str) -> list[str]:
    """Fill placeholders: ``{plan}`` becomes a requeue plan saved (by the admin) with
    --plan-out on the seeded scenario."""
    if "{plan}" not in args:
        return args
    import os

    from tests.topologies.runner import run_pelctl

    path = os.path.join(workdir, "plan.json")
    res = run_pelctl("requeue", "s", "g", "--idle", "30m", "--plan-out", path, url=admin_url)
    assert res.exit_code == 0, res.stderr
    return [path if a == "{plan}" else a for a in args]


def for_stream(args: list[str], stream: str) -> list[str]:
    """The same invocation on another stream (``s`` -> stream, ``s:dlq`` -> stream:dlq)."""
    swap = {"s": stream, "s:dlq": f"{stream}:dlq"}
    return [swap.get(a, a) for a in args]


def mutation_invocations() -> dict[str, list[str]]:
    """Every invocation of MUTATIONS (every one's command is registered: checked here)."""
    for name in MUTATIONS:
        assert exists(name.partition("#")[0]), f"{name} is not registered"
    assert set(EXPECTED) == set(MUTATIONS), "every mutation needs its EXPECTED outcome"
    return {name: list(args) for name, args in MUTATIONS.items()}


def mutating_commands() -> set[str]:
    return {path for path, mutating in registered().items() if mutating}


# -- what each mutation does to the seeded scenario --------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a mutation of MUTATIONS reports and leaves behind on ``seed()``'s scenario.

    ``report``: keys of the JSON result and their values (nested dicts compared whole);
    ``pending``: every consumer of group g and its pending count afterwards; ``length`` and
    ``dlq_length``: the stream's and its DLQ's lengths; ``copies``: field -> how many entries
    of the stream carry it (requeued copies carry ``_original_id``, replayed ones
    ``_replayed_from`` and their lineage's ``_original_id``), each with a distinct value."""

    report: dict[str, object]
    pending: dict[str, int]
    length: int
    dlq_length: int
    copies: dict[str, int] = field(default_factory=dict)


# seed(): 40 entries; dead holds 10 idle 1h (3 of them delivered 6 times, the last one a
# ghost), live holds 5 fresh ones; the DLQ holds 1 entry.
_REQUEUED = Outcome(
    {"applied": 10, "failed": [], "outcomes": {"requeued": 9, "ghost": 1}},
    {"dead": 0, "live": 5},
    39 + 9,
    1,
    {"_original_id": 9},
)
_RECLAIMED = Outcome(
    {
        "requeued": 6,
        "dead_lettered": 3,
        "ghosts": 1,
        "failed_count": 0,
        "claimed": 0,
        "skipped_alive": 0,
    },
    {"dead": 0, "live": 5},
    39 + 6,
    1 + 3,
    {"_original_id": 6},
)
EXPECTED: dict[str, Outcome] = {
    "claim": Outcome(
        {"applied": 10, "failed": [], "outcomes": {"claimed": 9, "ghost": 1}},
        {"dead": 0, "live": 14},
        39,
        1,
    ),
    "ack": Outcome(
        {"applied": 10, "failed": [], "outcomes": {"acked": 10}}, {"dead": 0, "live": 5}, 39, 1
    ),
    "requeue": _REQUEUED,
    "dlq move": Outcome(
        {"applied": 3, "failed": [], "outcomes": {"dlq": 3}}, {"dead": 7, "live": 5}, 39, 1 + 3
    ),
    "dlq replay": Outcome(
        {"applied": 1, "failed": [], "outcomes": {"replayed": 1}},
        {"dead": 10, "live": 5},
        40,
        0,
        {"_replayed_from": 1, "_original_id": 1},
    ),
    "dlq purge": Outcome(
        {"applied": 1, "failed": [], "outcomes": {"purged": 1}}, {"dead": 10, "live": 5}, 39, 0
    ),
    # both consumers idle >= 1ms: dead's 9 entries and live's 5 go to fresh (the ghost drops)
    "consumers prune": Outcome(
        {"applied": 2, "failed": [], "outcomes": {"deleted": 2, "reassigned": 15}},
        {"fresh": 14},
        39,
        1,
    ),
    "ghosts": Outcome(
        {"applied": 1, "failed": [], "outcomes": {"ghost": 1}}, {"dead": 9, "live": 5}, 39, 1
    ),
    "trim": Outcome(
        {"applied": 0, "failed": [], "outcomes": {"trimmed": 0}, "stopped_by": "pending"},
        {"dead": 10, "live": 5},
        39,
        1,
    ),
    "trim#no-groups": Outcome(
        {"applied": 1, "failed": [], "outcomes": {"trimmed": 1}, "stopped_by": "empty"},
        {"dead": 10, "live": 5},
        39,
        0,
    ),
    "reclaim": _RECLAIMED,  # --max-deliveries defaults to 5: the 3 poison ones to the DLQ
    "reclaim#autoclaim": _RECLAIMED,
    "apply": _REQUEUED,
}


def check_outcome(name: str, report: dict, client: redis.Redis, stream: str = STREAM) -> None:
    """Assert that mutation ``name`` reported and did what EXPECTED says. ``client`` reads
    the server (a RedisCluster on a cluster: the DLQ may live on another node)."""
    want = EXPECTED[name]
    got = {k: report.get(k) for k in want.report}
    assert got == want.report, (name, report)
    pending = {c["name"].decode(): int(c["pending"]) for c in client.xinfo_consumers(stream, GROUP)}
    assert pending == want.pending, (name, pending)
    assert client.xlen(stream) == want.length, name
    dlq = f"{stream}:dlq"
    assert (client.xlen(dlq) if client.exists(dlq) else 0) == want.dlq_length, name
    entries = client.xrange(stream)
    for fname, n in {"_original_id": 0, "_replayed_from": 0, **want.copies}.items():
        values = [f[fname.encode()] for _id, f in entries if fname.encode() in f]
        assert len(values) == len(set(values)) == n, (name, fname, values)
