"""``detect_lock_key`` on a real server: which ids it probes (each consumer's newest, then
the sample), the budget, and the count of keys probed, read back from the keys set here;
inspect's dead-letter stream report and its missing-group error."""

from __future__ import annotations

from pelctl.core.locks import LOCK_DETECT_PER_CONSUMER, detect_lock_key

S, G = b"jobs", b"workers"


def test_nothing_to_probe(r, conn) -> None:
    assert detect_lock_key(conn, S, G, {}) == (None, 0)
    r.set(b"lock:jobs:1-0", 1)
    # a budget of 0 (or less) probes nothing
    assert detect_lock_key(conn, S, G, {b"c": [b"1-0"]}, budget=0) == (None, 0)
    assert detect_lock_key(conn, S, G, {b"c": [b"1-0"]}, budget=-3) == (None, 0)


def test_found_through_the_sample_by_entry_id(r, conn) -> None:
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


def test_at_most_four_ids_a_consumer(r, conn) -> None:
    ids = [f"{i}-0".encode() for i in range(1, 7)]
    r.set(b"lock:" + ids[LOCK_DETECT_PER_CONSUMER], 1)  # the fifth newest: not probed
    assert detect_lock_key(conn, S, G, {b"c": ids}) == (None, 4 * LOCK_DETECT_PER_CONSUMER)
    r.set(b"lock:" + ids[LOCK_DETECT_PER_CONSUMER - 1], 1)
    assert detect_lock_key(conn, S, G, {b"c": ids}) == ("lock:{id}", 16)


def test_inspect_reports_the_dead_letter_stream_and_a_missing_group(r, conn) -> None:
    import pytest

    from pelctl.base.errors import GroupNotFound
    from pelctl.core.inspect import inspect_stream
    from pelctl.core.models import Advice
    from pelctl.demo import scenario as sc

    sc.add_entries(r, S, 3)
    sc.create_group(r, S, G)
    result = inspect_stream(conn, S)
    assert (result.dlq, result.dlq_length) == (None, None)  # no jobs:dlq
    for _ in range(3):
        r.xadd(b"jobs:dlq", {b"f": b"v"})
    result = inspect_stream(conn, S)
    assert (result.dlq, result.dlq_length) == (b"jobs:dlq", 3)
    assert result.advice[-1] == Advice("dead-letter stream jobs:dlq holds 3 entries")
    r.delete(b"jobs:dlq")
    r.set(b"jobs:dlq", b"not a stream")
    assert inspect_stream(conn, S).dlq_length is None
    with pytest.raises(GroupNotFound) as err:
        inspect_stream(conn, S, b"nope")
    assert (err.value.message, err.value.hint) == (
        "group nope not found on stream jobs",
        "see its groups: pelctl inspect jobs",
    )


def test_a_server_gone_during_the_search_is_named() -> None:
    """The lock search's keys go out in one pipeline: a lost server is a connection error
    that names it (``EXISTS: ...``), not a bare redis-py exception."""
    import pytest

    from pelctl.base.errors import ConnectionFailed
    from pelctl.redis.connection import connect
    from pelctl.redis.settings import ConnectionSettings
    from tests.conftest import start_redis

    server = start_redis()
    try:
        conn = connect(ConnectionSettings(url=server.url))
    finally:
        server.stop()
    try:
        with pytest.raises(ConnectionFailed) as err:
            detect_lock_key(conn, S, G, {b"c": [b"1-0"]})
    finally:
        conn.close()
    assert err.value.message.startswith("EXISTS: cannot connect: ")
