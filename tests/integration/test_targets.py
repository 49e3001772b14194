"""The command layer's name checks the CLI asks before it runs (no Redis call in cli/)."""

from __future__ import annotations

from pelctl.core.pending import last_delivered_ms
from pelctl.core.targets import is_group_of
from pelctl.demo import scenario as sc


def test_is_group_of(r, conn) -> None:
    """``reclaim orders billing`` without ``--group``: ``billing`` is a group of ``orders``
    and no stream, so it is read as the group; a stream of that name, another stream's
    group or a missing key is not."""
    sc.add_entries(r, b"orders", 3)
    sc.create_group(r, b"orders", b"billing")
    sc.add_entries(r, b"events", 1)
    r.set(b"plain", b"x")
    assert is_group_of(conn, b"orders", b"billing")
    assert not is_group_of(conn, b"orders", b"events")  # a stream itself
    assert not is_group_of(conn, b"orders", b"shipping")  # no such group
    assert not is_group_of(conn, b"plain", b"billing")  # not a stream
    assert not is_group_of(conn, b"missing", b"billing")
    sc.create_group(r, b"events", b"events-group")
    assert not is_group_of(conn, b"orders", b"events-group")  # another stream's


def test_last_delivered_ms(r, conn) -> None:
    ids = sc.add_entries(r, b"orders", 4)
    sc.create_group(r, b"orders", b"billing")
    sc.deliver(r, b"orders", b"billing", b"c1", 2)
    delivered = r.xinfo_groups(b"orders")[0]["last-delivered-id"]
    assert last_delivered_ms(conn, b"orders", b"billing") == int(delivered.split(b"-")[0])
    assert delivered in ids
