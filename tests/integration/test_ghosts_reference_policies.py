"""Ghosts and Redis 8.2's reference policies, checked on a real server: ``pelctl ghosts``,
``ghosts --fix`` and inspect's ghost count after each way an entry can leave a stream that
two groups still reference.

- ``XDEL`` (every version), ``XDELEX ... KEEPREF`` and ``XTRIM``/``XADD ... KEEPREF`` (8.2+,
  KEEPREF is the default) remove the entry and leave its PEL references: ghosts in every
  group that held it (``XACKDEL g KEEPREF`` acknowledges it in ``g`` first: ghosts in the
  other group only).
- ``DELREF`` removes the entry and its references from every group: no ghosts.
- ``ACKED`` removes only entries no group still references: here none, nothing changes.

Redis 7.0 has no reference policies (``XDELEX``/``XACKDEL`` are unknown commands, XTRIM
refuses the option): there the XDEL and plain XTRIM cases run, and the others check that
the server refuses what pelctl's capabilities say it lacks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import redis

from pelctl.core.inspect import inspect_stream
from pelctl.demo import scenario as sc

S = b"orders"
G1, G2 = b"billing", b"shipping"
N = 12
GONE = slice(4, 7)  # three entries in the middle: "deleted" ghosts
HEAD = 3  # the first three: "trimmed" ghosts


@dataclass(frozen=True)
class Case:
    name: str
    command: tuple[object, ...]  # with the ids appended for a delete
    ids: bool  # the command takes the middle entries' ids (else: a trim of the head)
    needs_policies: bool
    ghosts_in: tuple[bytes, ...]  # groups left with ghosts
    acked_in: tuple[bytes, ...] = ()  # groups the command acknowledged the entries in
    removed: bool = True  # the entries left the stream
    refs_dropped: bool = False  # DELREF: the references went from every group


def _with_ids(command: tuple[object, ...], ids: list[bytes]) -> tuple[object, ...]:
    if command[0] == "XDEL":
        return (*command, *ids)
    return (*command, "IDS", len(ids), *ids)  # XDELEX, XACKDEL


CASES = [
    Case("xdel", ("XDEL", S), True, False, (G1, G2)),
    Case("xdelex-keepref", ("XDELEX", S, "KEEPREF"), True, True, (G1, G2)),
    Case("xdelex-delref", ("XDELEX", S, "DELREF"), True, True, (), refs_dropped=True),
    Case("xdelex-acked", ("XDELEX", S, "ACKED"), True, True, (), removed=False),
    Case("xackdel-keepref", ("XACKDEL", S, G1, "KEEPREF"), True, True, (G2,), (G1,)),
    Case("xackdel-delref", ("XACKDEL", S, G1, "DELREF"), True, True, (), (G1,), refs_dropped=True),
    Case("xackdel-acked", ("XACKDEL", S, G1, "ACKED"), True, True, (), (G1,), removed=False),
    Case("xtrim", ("XTRIM", S, "MAXLEN", N - HEAD), False, False, (G1, G2)),
    Case("xtrim-keepref", ("XTRIM", S, "MAXLEN", N - HEAD, "KEEPREF"), False, True, (G1, G2)),
    Case(
        "xtrim-delref",
        ("XTRIM", S, "MAXLEN", N - HEAD, "DELREF"),
        False,
        True,
        (),
        refs_dropped=True,
    ),
    Case("xtrim-acked", ("XTRIM", S, "MAXLEN", N - HEAD, "ACKED"), False, True, (), removed=False),
    Case(
        "xadd-keepref",  # XADD trims the head as it adds: N + 1 entries, N - HEAD + 1 kept
        ("XADD", S, "KEEPREF", "MAXLEN", N - HEAD + 1, "*", "n", "new"),
        False,
        True,
        (G1, G2),
    ),
]


def pending(r, group: bytes) -> dict[bytes, bytes]:
    return {
        row[0]: row[1] for row in sc.raw(r).execute_command("XPENDING", S, group, "-", "+", 100)
    }


def consumers(r, group: bytes) -> set[bytes]:
    return {row[1] for row in sc.raw(r).execute_command("XINFO", "CONSUMERS", S, group)}


def ghosts_listed(cli, group: bytes) -> dict[str, str]:
    res = cli("ghosts", "orders", group.decode(), "-o", "json")
    assert res.exit_code == 0, res.stderr
    return {g["id"]: g["reason"] for g in res.json}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ghosts_after_each_way_out_of_the_stream(case: Case, r, conn, cli) -> None:
    ids = sc.add_entries(r, S, N)
    for group, worker in ((G1, b"w1"), (G2, b"w2")):
        sc.create_group(r, S, group)
        assert sc.deliver(r, S, group, worker, N) == ids
    targets = ids[GONE] if case.ids else ids[:HEAD]
    command = _with_ids(case.command, targets) if case.ids else case.command
    raw = sc.raw(r)
    if case.needs_policies and not conn.caps.has("xackdel"):
        # Redis 7.0: no reference policies; the capability and the server agree.
        with pytest.raises(redis.ResponseError):
            raw.execute_command(*command)
        assert raw.execute_command("XLEN", S) == N
        return
    raw.execute_command(*command)

    left = [entry[0] for entry in raw.execute_command("XRANGE", S, "-", "+")]
    if case.removed:
        assert not set(targets) & set(left)
    else:  # ACKED: every entry is still referenced by a group, none removed
        assert set(targets) <= set(left)
    reason = "deleted" if case.ids else "trimmed"
    report = {g.name: g for g in inspect_stream(conn, S).groups}
    for group in (G1, G2):
        expected = {i.decode(): reason for i in targets} if group in case.ghosts_in else {}
        assert ghosts_listed(cli, group) == expected, group
        assert report[group].ghosts == len(expected), group
        still = set(pending(r, group))
        if group in case.acked_in or case.refs_dropped:
            assert not set(targets) & still, group  # acknowledged or dropped: not pending
        else:
            assert set(targets) <= still, group  # ghosts, or (ACKED) live entries

    # ghosts --fix clears exactly the ghosts, in the groups that have them, and leaves no
    # consumer of its own (the sweep of the trimmed head creates one from 7.2).
    for group in (G1, G2):
        before = pending(r, group)
        res = cli("ghosts", "orders", group.decode(), "--fix", "--yes", "-o", "json")
        assert res.exit_code == 0, res.stderr
        fixed = len(targets) if group in case.ghosts_in else 0
        assert res.json["applied"] == fixed, (group, res.json)
        assert ghosts_listed(cli, group) == {}
        after = pending(r, group)
        gone = set(targets) if group in case.ghosts_in else set()
        assert after == {k: v for k, v in before.items() if k not in gone}
        assert b"pelctl-ghosts" not in consumers(r, group)
    assert all(g.ghosts == 0 for g in inspect_stream(conn, S).groups)
