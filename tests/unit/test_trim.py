"""pelctl/core/trim.py, the pure half: what a trim lost (the arithmetic of entries-added,
entries-read, length, first entry and max-deleted-entry-id), ids, bounds (no server)."""

from __future__ import annotations

import pytest

from pelctl.core.models import UnreadLoss
from pelctl.core.trim import (
    ID_PART_MAX,
    GroupBound,
    StreamFacts,
    add_losses,
    counters_exact,
    facts_of_info,
    lost_text,
    lowest_bound,
    next_id,
    trimmed_ghosts,
    unread_loss,
)
from pelctl.redis.capabilities import Capabilities


def facts(
    length: int = 500,
    first: bytes | None = b"501-0",
    last: bytes | None = b"1000-0",
    added: int | None = 1000,
    deleted: bytes | None = b"0-0",
) -> StreamFacts:
    return StreamFacts(length, first, last, last or b"1000-0", added, deleted)


def test_next_id() -> None:
    assert next_id(b"5-0") == b"5-1"
    assert next_id(b"5-%d" % ID_PART_MAX) == b"6-0"
    assert next_id(b"%d-%d" % (ID_PART_MAX, ID_PART_MAX)) is None


# The scenario: 1,000 entries (ids 1-0 .. 1000-0), slow read 100, XTRIM MAXLEN 500.
def test_the_loss_is_exact_while_the_group_is_below_the_first_entry() -> None:
    # Redis 7.0 reports lag 900 (entries-added - entries-read), 8.2+ reports 500
    for server_lag in (900, 500):
        assert unread_loss(facts(), b"100-0", 100, server_lag) == (500, UnreadLoss(400))


def test_nothing_is_lost_when_the_trim_stopped_at_the_group() -> None:
    # read 500, first entry 501: nothing after its position is gone
    assert unread_loss(facts(), b"500-0", 500, 500) == (500, None)
    # a safe trim removes up to the group's last-delivered entry included
    assert unread_loss(facts(first=b"101-0", length=900), b"100-0", 100, 900) == (900, None)


def test_a_group_that_read_everything_lost_nothing() -> None:
    assert unread_loss(facts(), b"1000-0", 1000, 0) == (0, None)
    # the stream trimmed to nothing after the group read it all
    empty = facts(length=0, first=None, last=None)
    assert unread_loss(empty, b"1000-0", 1000, 0) == (0, None)


def test_an_emptied_stream() -> None:
    empty = StreamFacts(0, None, None, b"1000-0", 1000, b"0-0")
    assert unread_loss(empty, b"100-0", 100, 900) == (0, UnreadLoss(900))


def test_unknown_counter_some_lost_count_unknown() -> None:
    assert unread_loss(facts(), b"100-0", None, None) == (
        500,
        UnreadLoss(None, exact=False),
    )
    # below Redis 7.0: no entries-added either
    assert unread_loss(facts(added=None, deleted=None), b"100-0", None, None) == (
        500,
        UnreadLoss(None, exact=False),
    )


def test_unknown_counter_but_nothing_ever_removed() -> None:
    # a group created at 0 on a stream whose first ids were never written (XADD 501-0 first)
    never = facts(length=500, added=500)
    assert unread_loss(never, b"0-0", None, None) == (500, None)


def test_xdel_after_the_group_makes_the_cause_trimmed_or_deleted() -> None:
    # 10 entries after slow's position were XDEL'd (max-deleted 300-0), then the trim came:
    # the count is still exact (entries added after the position that are gone), but some
    # of them were deleted on purpose, not trimmed.
    f = facts(deleted=b"300-0")
    assert unread_loss(f, b"100-0", 100, None) == (500, UnreadLoss(400, True, "trimmed-or-deleted"))
    # an XDEL before the group's position is none of its business
    assert unread_loss(facts(deleted=b"50-0"), b"100-0", 100, 900)[1] == UnreadLoss(400)


def test_an_inflated_lag_is_a_lower_bound() -> None:
    # Redis 7.0 / Valkey 8: slow read one more entry past the gap: entries-read 101, lag 899
    # (the server kept counting), only 499 entries are left after its position
    assert unread_loss(facts(), b"501-0", 101, 899) == (None, UnreadLoss(399, exact=False))
    # Redis 8.2+ re-counted it: lag 499, nothing to say
    assert unread_loss(facts(), b"501-0", 501, 499) == (499, None)
    # lag unknown (an XDEL ahead of the group): nothing to say
    assert unread_loss(facts(), b"501-0", None, None) == (None, None)


def test_negative_arithmetic_is_no_loss() -> None:
    # an ENTRIESREAD set by hand past the truth
    assert unread_loss(facts(), b"100-0", 700, 300) == (500, None)


def test_facts_of_info() -> None:
    info = {
        b"length": 2,
        b"first-entry": [b"1-0", [b"f", b"v"]],
        b"last-entry": [b"2-0", [b"f", b"v"]],
        b"last-generated-id": b"3-0",
        b"entries-added": 3,
        b"max-deleted-entry-id": b"3-0",
    }
    assert facts_of_info(info) == StreamFacts(2, b"1-0", b"2-0", b"3-0", 3, b"3-0")
    old = {b"length": 0, b"first-entry": None, b"last-entry": None, b"last-generated-id": b"0-0"}
    assert facts_of_info(old) == StreamFacts(0, None, None, b"0-0", None, None)


def test_add_losses() -> None:
    assert add_losses([None, None]) is None
    assert add_losses([UnreadLoss(400), None, UnreadLoss(10)]) == UnreadLoss(410)
    assert add_losses([UnreadLoss(400), UnreadLoss(None, False)]) == UnreadLoss(400, False)
    assert add_losses([UnreadLoss(None, False)]) == UnreadLoss(None, False)
    assert add_losses([UnreadLoss(1), UnreadLoss(2, True, "trimmed-or-deleted")]) == UnreadLoss(
        3, True, "trimmed-or-deleted"
    )


def test_lost_text() -> None:
    assert lost_text(UnreadLoss(400)) == "lost 400 entries to trimming before reading them"
    assert (
        lost_text(UnreadLoss(1, False)) == "lost at least 1 entry to trimming before reading them"
    )
    assert lost_text(UnreadLoss(None, False, "trimmed-or-deleted")) == (
        "lost entries to trimming or XDEL before reading them (how many is not known)"
    )


def test_trimmed_ghosts() -> None:
    assert trimmed_ghosts(facts(), b"1-0") == "all"  # no XDEL ever: every ghost was trimmed
    assert trimmed_ghosts(facts(deleted=b"600-0"), b"1-0") == "some"
    assert trimmed_ghosts(facts(deleted=b"600-0"), b"550-0") is None
    assert trimmed_ghosts(facts(length=0, first=None), None) == "all"


def bound(name: bytes, at: bytes | None, reason: str = "undelivered") -> GroupBound:
    return GroupBound(name, b"1-0", 0, None, None, None, None, None, False, at, reason, None, None)


def test_lowest_bound() -> None:
    groups = [bound(b"a", b"20-0"), bound(b"b", b"7-3", "pending"), bound(b"c", None)]
    assert lowest_bound(groups, None) == (b"7-3", "pending", b"b")
    assert lowest_bound(groups, b"7-2") == (b"7-2", "minid", None)
    assert lowest_bound([], None) == (None, "no-groups", None)
    assert lowest_bound([], b"5-0") == (b"5-0", "minid", None)


@pytest.mark.parametrize(
    ("server", "version", "exact"),
    [
        ("redis", (7, 0, 15), False),
        ("redis", (7, 4, 0), False),
        ("redis", (8, 2, 0), True),
        ("redis", (8, 6, 3), True),
        ("valkey", (8, 0, 1), False),
    ],
)
def test_counters_exact(server: str, version: tuple[int, int, int], exact: bool) -> None:
    assert counters_exact(Capabilities(server, version)) is exact
