"""``detect_lock_key`` on a real server: which ids it probes (each consumer's newest, then
the sample), the budget, and the count of keys probed, read back from the keys set here."""

from __future__ import annotations

from pelctl.core.inspect import LOCK_DETECT_PER_CONSUMER, detect_lock_key

S, G = b"jobs", b"workers"


def test_nothing_to_probe(r, conn) -> None:  # noqa: ANN001
    assert detect_lock_key(conn, S, G, {}) == (None, 0)
    r.set(b"lock:jobs:1-0", 1)
    # a budget of 0 (or less) probes nothing
    assert detect_lock_key(conn, S, G, {b"c": [b"1-0"]}, budget=0) == (None, 0)
    assert detect_lock_key(conn, S, G, {b"c": [b"1-0"]}, budget=-3) == (None, 0)


def test_found_through_the_sample_by_entry_id(r, conn) -> None:  # noqa: ANN001
    r.set(b"lock:jobs:7-0", 1)
    # four patterns for each of the two ids: the first pattern holding a key wins
    assert detect_lock_key(conn, S, G, {b"c": [b"6-0"]}, [(b"7-0", b"c")]) == (
        "lock:{stream}:{id}",
        8,
    )
    r.delete(b"lock:jobs:7-0")
    r.set(b"lock:7-0", 1)
    assert detect_lock_key(conn, S, G, {}, [(b"7-0", b"c")]) == ("lock:{id}", 4)
    assert detect_lock_key(conn, S, G, {}, [(b"8-0", b"c")]) == (None, 4)
    # the budget cuts the keys: the fourth pattern of the one id is not probed
    assert detect_lock_key(conn, S, G, {}, [(b"7-0", b"c")], budget=3) == (None, 3)


def test_at_most_four_ids_a_consumer(r, conn) -> None:  # noqa: ANN001
    ids = [f"{i}-0".encode() for i in range(1, 7)]
    r.set(b"lock:" + ids[LOCK_DETECT_PER_CONSUMER], 1)  # the fifth newest: not probed
    assert detect_lock_key(conn, S, G, {b"c": ids}) == (None, 4 * LOCK_DETECT_PER_CONSUMER)
    r.set(b"lock:" + ids[LOCK_DETECT_PER_CONSUMER - 1], 1)
    assert detect_lock_key(conn, S, G, {b"c": ids}) == ("lock:{id}", 16)
