"""The one helper for flat RESP2 replies (pelctl/redis/replies.py)."""

from __future__ import annotations

import pytest

from pelctl.redis.replies import array, field_pairs, pairs, rows


def test_pairs_maps_alternating_names_and_values() -> None:
    assert pairs([b"name", b"g1", b"pending", 3]) == {b"name": b"g1", b"pending": 3}
    assert pairs([]) == {}


def test_rows_maps_each_flat_row() -> None:
    reply = [[b"name", b"a", b"idle", 5], [b"name", b"b", b"idle", 7]]
    assert rows(reply) == [{b"name": b"a", b"idle": 5}, {b"name": b"b", b"idle": 7}]


def test_field_pairs_keep_order_and_repeated_names() -> None:
    flat = [b"k\xff", b"v", b"text", b"caf\xc3\xa9", b"k\xff", b"again"]
    assert field_pairs(flat) == ((b"k\xff", b"v"), (b"text", b"caf\xc3\xa9"), (b"k\xff", b"again"))


def test_a_truncated_reply_is_an_error_not_a_silent_drop() -> None:
    with pytest.raises(IndexError):
        pairs([b"name"])
    with pytest.raises(ValueError):
        field_pairs([b"name"])


def test_array_lists_an_array_reply_and_names_anything_else() -> None:
    assert array([b"claimed", b"1-0"]) == [b"claimed", b"1-0"]
    assert array((b"a", 1)) == [b"a", 1]
    assert array([]) == []
    # a status or nil where a script's array was due: a TypeError that shows the reply (a
    # bytes reply would otherwise be listed as its byte values)
    for reply in (b"OK", None, 3):
        with pytest.raises(TypeError, match="expected an array reply"):
            array(reply)
