"""``pel_health`` (the PEL walk behind ``inspect``'s idle counts, longest-idle entry, poison
count and ghosts) on a real server, against the PEL read here with one raw ``XPENDING``:
an empty PEL, a PEL of one entry, a walk of several pages, and the switch to an ``IDLE``
floor above 10,000 pending entries.

Idle times keep growing: entries are set idle far from every threshold (``XCLAIM IDLE``),
and "fresh" entries (delivered by the test) stay under the 1-minute threshold for the few
seconds a test takes. Each page of a walk is read a little later than the one before, so
the longest-idle entry is asserted only where no other entry comes close."""

from __future__ import annotations

from pelctl.core.health import FULL_SCAN_MAX, IDLE_THRESHOLDS_MS, LivenessTally, pel_health
from pelctl.core.models import IdleCounts, PendingEntry
from pelctl.demo import scenario as sc

S, G = b"health:s", b"g"
HOUR = 3_600_000


def xpending(r, group: bytes = G) -> list[list]:
    """The whole PEL, as the server reports it now."""
    return sc.raw(r).execute_command("XPENDING", S, group, "-", "+", 100_000)


def longest_of(rows: list[list]) -> list:
    return max(rows, key=lambda row: row[2])


def test_an_empty_pel(r, conn) -> None:
    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    assert pel_health(conn, S, G, 0) == (IdleCounts(IDLE_THRESHOLDS_MS, (0, 0, 0), 0, None, 0), 0)


def test_a_pel_of_one_entry(r, conn) -> None:
    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    (one,) = sc.deliver(r, S, G, b"c", 1)
    sc.set_idle(r, S, G, b"c", [one], 2 * HOUR, deliveries=5)
    before = xpending(r)[0][2]
    counts, ghosts = pel_health(conn, S, G, 1)  # no tally: inspect's dashboard use
    after = xpending(r)[0][2]
    assert ghosts == 0
    assert (counts.thresholds_ms, counts.counts, counts.scanned, counts.poison) == (
        IDLE_THRESHOLDS_MS,
        (1, 1, 1),
        1,
        1,
    )
    assert counts.longest is not None
    assert (counts.longest.id, counts.longest.consumer, counts.longest.deliveries) == (one, b"c", 5)
    assert before <= counts.longest.idle_ms <= after


def test_a_walk_of_several_pages(r, conn) -> None:
    """3,000 entries: more than one page (at most 2,000 rows a call). The longest-idle entry
    is on the first page, poison suspects on the first and the last."""
    sc.add_entries(r, S, 3_000)
    sc.create_group(r, S, G)
    ids = sc.deliver(r, S, G, b"c", 3_000)
    sc.age(
        r,
        S,
        G,
        [
            sc.Aging(b"c", ids[2:-1], 90_000),  # over the first threshold only
            sc.Aging(b"c", [ids[1], ids[-1]], 20 * 60_000, 5),  # over 10m
            sc.Aging(b"c", [ids[0]], 2 * HOUR, 5),
        ],
    )
    tally = LivenessTally(dead_after_ms=HOUR)
    counts, ghosts = pel_health(conn, S, G, 3_000, tally=tally)
    rows = xpending(r)
    assert len(rows) == 3_000 and ghosts == 0
    by_hand = tuple(sum(1 for row in rows if row[2] >= t) for t in IDLE_THRESHOLDS_MS)
    assert by_hand == (3_000, 3, 1)
    assert (counts.counts, counts.scanned, counts.poison) == (by_hand, 3_000, 3)
    top = longest_of(rows)
    assert top[0] == ids[0]
    assert counts.longest == PendingEntry(ids[0], b"c", counts.longest.idle_ms, 5)
    assert 2 * HOUR <= counts.longest.idle_ms <= top[2]
    assert (tally.floor, tally.seen[b"c"], tally.stale[b"c"], tally.poison[b"c"]) == (
        None,
        3_000,
        1,
        3,
    )


def test_above_ten_thousand_pending_only_entries_over_the_first_threshold_are_read(r, conn) -> None:
    """At FULL_SCAN_MAX pending entries the PEL is read whole; one more and the walk asks the
    server for entries idle at least a minute only (XPENDING IDLE), so fresh entries never
    cross the wire: nothing read, no longest-idle entry."""
    sc.add_entries(r, S, FULL_SCAN_MAX + 1, collect_ids=False)
    sc.create_group(r, S, b"whole")
    sc.create_group(r, S, b"floored")
    sc.deliver(r, S, b"whole", b"c", FULL_SCAN_MAX)
    sc.deliver(r, S, b"floored", b"c", FULL_SCAN_MAX + 1)

    whole_tally = LivenessTally(dead_after_ms=HOUR)
    whole, _ = pel_health(conn, S, b"whole", FULL_SCAN_MAX, tally=whole_tally)
    assert (whole.counts, whole.scanned, whole_tally.floor) == ((0, 0, 0), FULL_SCAN_MAX, None)
    assert whole.longest is not None and whole.longest.consumer == b"c"

    floored_tally = LivenessTally(dead_after_ms=HOUR)
    floored = pel_health(conn, S, b"floored", FULL_SCAN_MAX + 1, tally=floored_tally)
    assert floored == (IdleCounts(IDLE_THRESHOLDS_MS, (0, 0, 0), 0, None, 0), 0)
    assert floored_tally.floor == IDLE_THRESHOLDS_MS[0]
    assert max(row[2] for row in xpending(r, b"floored")) < IDLE_THRESHOLDS_MS[0]
