"""The stream entries FastStream 0.7 and taskiq-redis 1.2 write, byte for byte.

The reference for pelctl's payload decoders (docs/frameworks.md, "Wire formats"): these
tests publish through the libraries and read the entries back with a reader written from
that description, so a library upgrade that changes the format fails here first.
"""

from __future__ import annotations

import asyncio
import json
import struct
from dataclasses import dataclass

import pytest
from faststream.redis import RedisBroker
from faststream.redis.parser import BinaryMessageFormatV1
from taskiq_redis import RedisStreamBroker

MAGIC = b"\x89BIN\r\n\x1a\n"


@dataclass(frozen=True)
class Frame:
    version: int
    headers_start: int
    data_start: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


def read_frame(frame: bytes) -> Frame:
    """FastStream's binary message format, version 1 (all integers big-endian).

    magic (8 bytes) | version u16 | headers_start u32 | data_start u32 |
    at headers_start: count u16, then count x (key_len u16, key, value_len u16, value) |
    at data_start: the body, to the end.
    """
    assert frame[:8] == MAGIC
    version, headers_start, data_start = struct.unpack_from(">HII", frame, 8)
    (count,) = struct.unpack_from(">H", frame, headers_start)
    pos = headers_start + 2
    headers = []
    for _ in range(count):
        pair = []
        for _part in range(2):
            (n,) = struct.unpack_from(">H", frame, pos)
            pair.append(frame[pos + 2 : pos + 2 + n])
            pos += 2 + n
        headers.append((pair[0], pair[1]))
    assert pos == data_start, (pos, data_start)
    return Frame(version, headers_start, data_start, headers, frame[data_start:])


def test_faststream_entry_is_one_binary_frame_in_the_data_field(r, redis_server):
    async def publish() -> list[bytes]:
        broker = RedisBroker(redis_server.url)
        await broker.connect()
        try:
            return [
                await broker.publish(
                    {"order": "o-1", "amount": 5},
                    stream="fs",
                    correlation_id="c-1",
                    headers={"x-trace": "t-1", "tenant": "acme"},
                ),
                await broker.publish(b"\x00\xff raw", stream="fs", correlation_id="c-2"),
                await broker.publish(
                    "text body", stream="fs", correlation_id="c-3", reply_to="answers"
                ),
            ]
        finally:
            await broker.stop()

    ids = asyncio.run(publish())
    entries = r.xrange("fs")
    assert [e[0] for e in entries] == ids  # publish() returns the entry id
    frames = []
    for _id, fields in entries:
        assert list(fields) == [b"__data__"]  # the only field
        frames.append(fields[b"__data__"])

    json_f, raw_f, text_f = (read_frame(f) for f in frames)
    for f in (json_f, raw_f, text_f):
        assert (f.version, f.headers_start) == (1, 18)
    # Headers in this order: correlation_id, content-type (if any), reply_to (if any), then
    # the caller's headers in their order. No message_id header is written.
    assert json_f.headers == [
        (b"correlation_id", b"c-1"),
        (b"content-type", b"application/json"),
        (b"x-trace", b"t-1"),
        (b"tenant", b"acme"),
    ]
    assert json_f.body == b'{"order":"o-1","amount":5}'  # compact JSON
    assert raw_f.headers == [(b"correlation_id", b"c-2")]  # bytes: no content-type
    assert raw_f.body == b"\x00\xff raw"
    assert text_f.headers == [
        (b"correlation_id", b"c-3"),
        (b"content-type", b"text/plain"),
        (b"reply_to", b"answers"),
    ]
    assert text_f.body == b"text body"
    # FastStream's own reader agrees.
    for frame, f in zip(frames, (json_f, raw_f, text_f), strict=True):
        body, headers = BinaryMessageFormatV1.parse(frame)
        assert body == f.body
        assert headers == {k.decode(): v.decode() for k, v in f.headers}


def _encode(headers: dict[str, str]) -> bytes:
    async def encode() -> bytes:
        return await BinaryMessageFormatV1.encode(
            message=b"body", reply_to=None, headers=headers, correlation_id="c"
        )

    return asyncio.run(encode())


def test_faststream_frame_string_lengths_count_characters_not_bytes():
    """A header that is not ASCII gets a length prefix of its *character* count (FastStream
    0.7 ``BinaryWriter.write_string`` uses ``len(str)``), so the frame is inconsistent.
    ``data_start`` stays right (it is computed from the bytes written). FastStream's own
    reader then either truncates the value silently or, when the lengths send it astray,
    hands over the whole frame as the body with no headers. Decoders must not trust the
    header lengths of such a frame."""
    frame = _encode({"city": "Zürich"})
    (data_start,) = struct.unpack_from(">I", frame, 14)
    assert frame[data_start:] == b"body"
    assert b"\x00\x06Z\xc3\xbcrich" in frame  # 6 characters, 7 bytes
    with pytest.raises(AssertionError):
        read_frame(frame)
    assert BinaryMessageFormatV1.parse(frame) == (b"body", {"correlation_id": "c", "city": "Züric"})

    frame = _encode({"x": "é€", "k": "v"})
    assert BinaryMessageFormatV1.parse(frame) == (frame, {})


def test_taskiq_entry_is_the_task_json_in_the_data_field(r, redis_server):
    async def kick() -> None:
        broker = RedisStreamBroker(redis_server.url, queue_name="tq")
        await broker.startup()
        try:

            async def work(payload: object, hold: bool = False) -> None:
                return None

            task = broker.register_task(work, task_name="billing.charge")
            await (
                task.kicker()
                .with_task_id("t-1")
                .with_labels(trace="x", attempt=2)
                .kiq({"order": "o-1", "note": "crème"}, hold=False)
            )
        finally:
            await broker.shutdown()

    asyncio.run(kick())
    ((_id, fields),) = r.xrange("tq")
    assert list(fields) == [b"data"]  # the only field
    # json.dumps with its default separators and ensure_ascii; keys in this order.
    assert fields[b"data"] == (
        b'{"task_id": "t-1", "task_name": "billing.charge", '
        b'"labels": {"trace": "x", "attempt": "2"}, "labels_types": {"trace": 3, "attempt": 2}, '
        b'"args": [{"order": "o-1", "note": "cr\\u00e8me"}], "kwargs": {"hold": false}}'
    )
    msg = json.loads(fields[b"data"])
    assert list(msg) == ["task_id", "task_name", "labels", "labels_types", "args", "kwargs"]
    # The stream broker's consumer group: created by the first startup() at "$".
    (group,) = r.xinfo_groups("tq")
    assert group["name"] == b"taskiq"
