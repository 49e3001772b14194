"""The pelctl invocations the hardening suites run, and the scenario they run them on.

The read-only list and the mutation table cover every command of SPEC §3 that the typer app
has registered at test time: when a command lands, the suites (ACL, Valkey, Sentinel,
faults, security) start exercising it without further edits, and
``test_every_mutation_is_covered`` fails if a new mutating command has no entry here.
"""

from __future__ import annotations

from functools import cache

import redis

from pelctl import scenario as sc

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
        "XADD", dlq, "*", "order", "o-0", "_dlq_source", stream, "_dlq_group", "g",
        "_dlq_id", "1-0", "_dlq_owner", "dead", "_dlq_deliveries", "7", "_dlq_idle_ms", "1",
        "_dlq_reason", "poison", "_dlq_at", "1",
    )  # fmt: skip
    return {"ids": ids, "dead": dead, "live": live}


@cache
def registered() -> dict[str, bool]:
    """Every command path of the app (``"dlq move"``) -> whether it mutates (has --dry-run)."""
    import typer.main

    from pelctl.cli.app import app

    out: dict[str, bool] = {}

    def walk(cmd, path: tuple[str, ...]) -> None:  # noqa: ANN001
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
            return
        out[" ".join(path)] = any(p.name == "dry_run" for p in cmd.params)

    walk(typer.main.get_command(app), ())
    return out


def exists(path: str) -> bool:
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
    ["version", "--server"],
]


def read_invocations() -> list[list[str]]:
    """The read-only invocations whose command exists now."""
    out = []
    for args in _READS:
        path = args[0] if args[0] not in ("dlq", "consumers", "audit") else " ".join(args[:2])
        if exists(path):
            out.append(args)
    return out


# Every mutating command of SPEC §3, with arguments that would change the seeded scenario.
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
    ],  # fmt: skip
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
    ],  # fmt: skip
    "ghosts": ["ghosts", "s", "g", "--fix", "--yes"],
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
    ],  # fmt: skip
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
    return {name: args for name, args in MUTATIONS.items() if exists(name.partition("#")[0])}


def mutating_commands() -> set[str]:
    return {path for path, mutating in registered().items() if mutating}


def dump_all(client: redis.Redis) -> dict[bytes, bytes]:
    """Every key's DUMP, for "nothing changed" assertions. A stream's DUMP carries its
    groups, PEL (owner, delivery time and count of every entry) and consumers' seen-times,
    so any claim, ack, read or idle reset shows up."""
    return {key: client.dump(key) for key in client.scan_iter(count=1000)}
