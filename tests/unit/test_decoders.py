"""The built-in payload decoders (pelctl/core/decoders.py) on values written by the real
libraries (FastStream's frame encoder, taskiq's message model), broken values and the size
bounds. The registry's entry points are tested in tests/cli/test_payload_decoders.py."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pelctl.core import decoders
from pelctl.core.decoders import registry
from pelctl.core.decoders.common import MAX_DECODE_BYTES, Decoded
from pelctl.core.decoders.registry import decode
from tests.payload_builders import faststream_frame
from tests.payload_builders import taskiq_data as build_taskiq

MAGIC = b"\x89BIN\r\n\x1a\n"


def frame(body: Any, headers: dict[str, str] | None = None, cid: str = "c-1") -> bytes:
    return faststream_frame(body, headers, correlation_id=cid)


def taskiq_data(**overrides: Any) -> bytes:
    return build_taskiq(**overrides)


def fs(value: bytes, *extra: tuple[bytes, bytes]) -> tuple[tuple[bytes, bytes], ...]:
    return ((b"__data__", value), *extra)


# -- FastStream --------------------------------------------------------------------------------


def test_faststream_json_body_and_headers() -> None:
    d = decode(fs(frame({"order": 7, "note": "crème"}, {"x-trace": "t-1", "tenant": "acme"})))
    assert d is not None and d.format == "faststream"
    assert d.to_json() == {
        "format": "faststream",
        "headers": {
            "correlation_id": "c-1",
            "content-type": "application/json",
            "x-trace": "t-1",
            "tenant": "acme",
        },
        "body": {"order": 7, "note": "crème"},
        "body_type": "json",
    }
    assert d.summary == (
        '{"order": 7, "note": "crème"} headers: correlation_id=c-1 x-trace=t-1 tenant=acme'
    )
    assert not d.notes


def test_faststream_text_and_binary_bodies() -> None:
    text = decode(fs(frame("plain text")))
    assert text is not None
    assert (text.data["body"], text.data["body_type"]) == ("plain text", "text")
    raw = decode(fs(frame(b"\x00\xffbin")))
    assert raw is not None
    assert raw.data["headers"] == {"correlation_id": "c-1"}  # bytes: no content-type
    assert (raw.data["body"], raw.data["body_type"]) == ("\\x00\\xffbin", "binary")


def test_faststream_lineage_fields_are_in_the_summary() -> None:
    d = decode(fs(frame({"a": 1}), (b"_retry_count", b"2"), (b"_original_id", b"1-0")))
    assert d is not None and d.format == "faststream"
    assert d.summary.endswith(" · _retry_count=2 _original_id=1-0")


@pytest.mark.parametrize(
    ("headers", "faststream_reads"),
    [
        ({"city": "Zürich"}, {"correlation_id": "c", "city": "Züric"}),  # truncated
        ({"x": "é€", "k": "v"}, {}),  # FastStream gives up: the whole frame is the body
    ],
)
def test_faststream_character_count_lengths_are_recovered(headers, faststream_reads) -> None:
    """FastStream 0.7 writes len(str) as the length of a header: its own reader truncates or
    gives up; pelctl reads the lengths as characters, gets every header right, and says so."""
    from faststream.redis.parser import BinaryMessageFormatV1

    value = frame(b"body", headers, cid="c")
    assert BinaryMessageFormatV1.parse(value)[1] == faststream_reads
    d = decode(fs(value))
    assert d is not None
    assert d.data["headers"] == {"correlation_id": "c", **headers}
    assert d.data["body"] == "body"
    assert "count characters" in d.notes[0]
    assert d.summary.startswith("body headers: correlation_id=c") and "(!)" in d.summary


def test_faststream_inconsistent_headers_keep_the_ascii_ones() -> None:
    """Lengths that add up neither in bytes nor in characters: the leading ASCII headers are
    kept (byte and character counts agree for them), the rest is flagged, the body is read
    from data_start."""
    value = bytearray(frame(b"body", {"a": "1", "b": "ü"}, cid="c"))
    at = value.index(b"\x00\x01b")  # the key "b": claim it is 3 bytes long
    value[at + 1] = 3
    d = decode(fs(bytes(value)))
    assert d is not None
    assert d.data["headers"] == {"correlation_id": "c", "a": "1"}
    assert d.data["body"] == "body"
    assert d.notes == (
        "headers inconsistent: 1 of 3 unreadable (lengths do not add up to the body offset)",
    )


def test_faststream_legacy_envelope_and_raw_value() -> None:
    headers = {"content-type": "application/json", "correlation_id": "old"}
    legacy = json.dumps({"data": '{"a": 1}', "headers": headers}).encode()
    d = decode(fs(legacy))
    assert d is not None and d.format == "faststream"
    assert d.data["body"] == {"a": 1} and d.data["headers"]["correlation_id"] == "old"
    assert "older JSON envelope" in d.notes[0]
    raw = decode(fs(b"just bytes"))
    assert raw is not None and raw.data == {
        "headers": {},
        "body": "just bytes",
        "body_type": "text",
    }
    assert "raw body" in raw.notes[0]


def test_faststream_json_content_type_with_a_body_that_is_not_json() -> None:
    value = frame(b"not json", {"content-type": "application/json"})
    d = decode(fs(value))
    assert d is not None
    assert (d.data["body"], d.data["body_type"]) == ("not json", "text")
    assert "is not JSON" in d.notes[0]


def _with_offsets(value: bytes, headers_start: int, data_start: int) -> bytes:
    return value[:10] + struct.pack(">II", headers_start, data_start) + value[18:]


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(lambda f: f[:8], id="magic-only"),
        pytest.param(lambda f: f[:19], id="truncated-head"),
        pytest.param(lambda f: f[:30], id="truncated-headers"),
        pytest.param(lambda f: f[:8] + b"\x00\x02" + f[10:], id="version-2"),
        pytest.param(lambda f: _with_offsets(f, 18, 2**32 - 1), id="data-start-beyond"),
        pytest.param(lambda f: _with_offsets(f, 2**32 - 1, 2**32 - 1), id="headers-beyond"),
        pytest.param(lambda f: _with_offsets(f, 0, 40), id="headers-inside-the-head"),
        pytest.param(lambda f: _with_offsets(f, 40, 20), id="data-before-headers"),
    ],
)
def test_garbled_frames_fall_back_without_error(broken) -> None:
    """A value that starts like a frame but does not hold together is not guessed at: the
    entry falls back to the raw view (decode returns None)."""
    assert decode(fs(broken(frame({"a": 1}, {"x": "y"})))) is None


def test_absurd_header_count_is_bounded() -> None:
    value = bytearray(frame(b"body", {"x": "y"}))
    value[18:20] = b"\xff\xff"  # 65,535 headers claimed in a 30-byte block
    d = decode(fs(bytes(value)))
    assert d is not None and d.data["body"] == "body"
    assert d.data["headers"] == {"correlation_id": "c-1", "x": "y"}  # the two that are there
    assert "65533 of 65535 unreadable" in d.notes[0]


@given(st.binary(max_size=200), st.integers(min_value=0, max_value=120))
@example(b"\xff" * 40, 10)
@settings(max_examples=300, deadline=None)
def test_any_mutation_of_a_frame_decodes_or_falls_back(junk: bytes, at: int) -> None:
    value = frame({"order": 1}, {"x-trace": "t"})
    mutated = value[:at] + junk + value[at + len(junk) :]
    d = decode(fs(mutated))
    assert d is None or isinstance(d, Decoded)
    if d is not None:
        json.dumps(d.to_json(), allow_nan=False)  # always writable as JSON
        assert isinstance(d.summary, str)


# -- bounds --------------------------------------------------------------------------------------


def test_a_one_mib_value_is_decoded_and_a_bigger_one_is_not() -> None:
    body = {"blob": "x" * (MAX_DECODE_BYTES - 200)}
    value = frame(body)
    assert len(value) <= MAX_DECODE_BYTES
    d = decode(fs(value))
    assert d is not None and d.data["body"] == body
    assert len(d.summary) < 400  # the line shows a preview, not the megabyte
    too_big = frame({"blob": "x" * MAX_DECODE_BYTES})
    assert decode(fs(too_big)) is None
    assert decode(((b"payload", json.dumps({"blob": "y" * MAX_DECODE_BYTES}).encode()),)) is None


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(b"[" * MAX_DECODE_BYTES, id="1MiB-of-brackets"),
        pytest.param(b"[" * 100 + b"]" * 100, id="deeper-than-MAX_DEPTH"),
        pytest.param(b'{"a": NaN}', id="NaN"),
        pytest.param(b'{"a": Infinity}', id="Infinity"),
        pytest.param(b"[" + b"9" * 5000 + b"]", id="huge-integer"),
        pytest.param(b'{"a": 1', id="truncated"),
    ],
)
def test_json_that_cannot_be_shown_is_not_decoded(value: bytes) -> None:
    assert decode(((b"payload", value),)) is None
    if len(value) < MAX_DECODE_BYTES - 100:  # as a FastStream body: shown as text
        d = decode(fs(frame(value, {"content-type": "application/json"})))
        assert d is not None and d.data["body_type"] == "text"


def test_a_float_too_big_for_a_double_keeps_its_text() -> None:
    d = decode(((b"payload", b'{"big": 1e999, "ok": 1.5}'),))
    assert d is not None and d.data["fields"]["payload"] == {"big": "1e999", "ok": 1.5}
    json.dumps(d.to_json(), allow_nan=False)


# -- taskiq --------------------------------------------------------------------------------------


def test_taskiq_message() -> None:
    d = decode(((b"data", taskiq_data()),))
    assert d is not None and d.format == "taskiq"
    assert d.to_json() == {
        "format": "taskiq",
        "task_id": "t-1",
        "task_name": "billing.charge",
        "args": [7, {"order": "o-1", "note": "crème"}],
        "kwargs": {"hold": False},
        "labels": {"trace": "x", "attempt": 2, "urgent": True},  # typed by labels_types
    }
    assert d.summary == (
        'billing.charge(7, {"order": "o-1", "note": "crème"}, hold=false) id=t-1 '
        "labels: trace=x attempt=2 urgent=true"
    )


def test_taskiq_long_argument_lists_are_cut() -> None:
    d = decode(((b"data", taskiq_data(args=list(range(20)), kwargs={})),))
    assert d is not None and d.summary.startswith("billing.charge(0, 1, 2, 3, 4, 5, 6, 7, …) id=")


def test_not_a_taskiq_message() -> None:
    # JSON without the task's keys: a JSON value, not a task.
    d = decode(((b"data", b'{"task_id": "t", "task_name": 3}'),))
    assert d is not None and d.format == "json"
    # taskiq with another serializer (msgpack): nothing knows it.
    assert decode(((b"data", b"\x86\xa7task_id\xa3t-1"),)) is None


# -- JSON values and plain fields ----------------------------------------------------------------


def test_json_values_next_to_plain_fields() -> None:
    d = decode(((b"event", b'{"type": "paid", "ids": [1, 2]}'), (b"n", b"1")))
    assert d is not None and d.format == "json"
    assert d.data == {"fields": {"event": {"type": "paid", "ids": [1, 2]}, "n": "1"}}
    assert d.summary == 'event={"type": "paid", "ids": [1, 2]} n=1'


@pytest.mark.parametrize(
    "fields",
    [
        ((b"order_id", b"ord-1"), (b"amount", b"5")),  # plain fields
        ((b"n", b"12"), (b"s", b'"quoted"')),  # JSON scalars are not worth decoding
        ((b"blob", b"\x00\xff"),),
        (),
    ],
)
def test_plain_fields_are_left_to_the_raw_view(fields) -> None:
    assert decode(fields) is None


def test_decoded_data_of_builtins_is_plain_json() -> None:
    for fields in (fs(frame({"a": [1, None, True]})), ((b"data", taskiq_data()),)):
        d = decode(fields)
        assert d is not None
        assert json.loads(json.dumps(d.to_json(), allow_nan=False)) == d.to_json()


def test_decoders_are_tried_in_order_and_never_raise(monkeypatch) -> None:
    """A decoder that raises or returns something else is skipped and recorded; the next one
    decides (here the built-ins). (The registry's loading is tested with real entry points
    in tests/cli/test_payload_decoders.py.)"""
    decoders.reset()

    def broken(fields: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(registry, "_plugins", [("broken", broken), ("odd", lambda f: "text")])
    d = decode(fs(frame({"a": 1})))
    assert d is not None and d.format == "faststream"
    assert decoders.problems() == {
        "broken": "raised RuntimeError: boom",
        "odd": "returned str, not Decoded or None",
    }
    decoders.reset()
