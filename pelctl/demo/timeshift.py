"""Make stream consumers look as if they were last seen earlier than they really were.

Why this exists
---------------
Scenarios such as "a consumer crashed an hour ago and still owns pending entries" are the
bread and butter of pelctl's demos and tests, but Redis offers no way to build them quickly:

- nothing sets a consumer's idle time (``XINFO CONSUMERS`` ``idle`` / ``inactive``);
- ``XCLAIM ... IDLE`` moves the *entry's* idle time but resets the consumer's ``seen-time``;
- waiting an hour is not an option in a test suite.

The one door left is ``DUMP``/``RESTORE``: the DUMP payload of a stream is its RDB
serialisation, which carries every consumer's ``seen_time`` (and, from Redis 7.2 / Valkey 7.2
on, ``active_time``) as 8-byte little-endian Unix milliseconds. This module walks that
serialisation, subtracts the requested number of milliseconds from those two fields for the
named consumers (in every consumer group of the stream), recomputes the payload's CRC-64 and
``RESTORE``s the key with ``REPLACE``, keeping its TTL. Nothing else changes: entries, group
cursors, the global PEL (delivery times and counts, so ``XPENDING`` idle) and the consumer PELs
are copied byte for byte.

Supported formats (the type byte that opens the payload; layouts checked against
``rdbSaveObject``/``rdbLoadObject`` in Redis' and Valkey's ``src/rdb.c``):

- 15 ``RDB_TYPE_STREAM_LISTPACKS``   (Redis 5.0-6.2): ``seen_time`` only;
- 19 ``RDB_TYPE_STREAM_LISTPACKS_2`` (Redis 7.0): adds first id, max deleted id, entries added
  and each group's entries-read counter; ``seen_time`` only;
- 21 ``RDB_TYPE_STREAM_LISTPACKS_3`` (Redis 7.2-8.4, Valkey 7.2-9.x): adds ``active_time``;
- 26 ``RDB_TYPE_STREAM_LISTPACKS_4`` (Redis 8.6): the idempotent-producer state after the
  groups (``idmp-duration``, ``idmp-maxsize``, each producer's ids with the entry id each
  one produced, and the ``iids-added`` / ``iids-duplicates`` counters), copied untouched.

Anything else (a newer stream type) is refused with :class:`ValueError` rather than guessed
at.

.. warning::
   This is a helper for seeding demo and test scenarios only. Never use it on production
   data: it rewrites the whole key (``RESTORE ... REPLACE``), which wakes or errors blocked
   ``XREADGROUP`` callers, resets the key's LRU/LFU information, costs O(size of the
   stream) on the server and in Python, and forges timestamps that operators rely on.

The read (``DUMP``/``PTTL``) and the write (``RESTORE``) are tied together with
``WATCH``/``MULTI``/``EXEC``: if the stream changes in between, the attempt is retried, so a
concurrent ``XADD``/``XACK`` is never lost. In a cluster, pass a client of the node that owns
``key`` (for example ``Connection.raw(key)``).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

import redis
from redis.exceptions import WatchError

from pelctl.redis.connection import strip_callbacks

__all__ = [
    "RDB_TYPE_STREAM_LISTPACKS",
    "RDB_TYPE_STREAM_LISTPACKS_2",
    "RDB_TYPE_STREAM_LISTPACKS_3",
    "RDB_TYPE_STREAM_LISTPACKS_4",
    "SUPPORTED_STREAM_TYPES",
    "backdate_consumers",
    "backdate_payload",
    "crc64",
]

RDB_TYPE_STREAM_LISTPACKS = 15
RDB_TYPE_STREAM_LISTPACKS_2 = 19
RDB_TYPE_STREAM_LISTPACKS_3 = 21
RDB_TYPE_STREAM_LISTPACKS_4 = 26
SUPPORTED_STREAM_TYPES = (
    RDB_TYPE_STREAM_LISTPACKS,
    RDB_TYPE_STREAM_LISTPACKS_2,
    RDB_TYPE_STREAM_LISTPACKS_3,
    RDB_TYPE_STREAM_LISTPACKS_4,
)

# Millisecond times are written little-endian since RDB 9 (Redis 5.0, which introduced streams).
_MIN_RDB_VERSION = 9

_MAX_WATCH_RETRIES = 10

# --- CRC-64 (Jones coefficients, reflected, init 0, xorout 0), as in Redis' src/crc64.c ----------

_CRC64_POLY_REFLECTED = 0x95AC9329AC4BC9B5


def _make_crc64_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CRC64_POLY_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC64_TABLE = _make_crc64_table()


def crc64(data: bytes, crc: int = 0) -> int:
    """Redis' CRC-64 of ``data`` (``crc64(0, "123456789")`` is ``0xe9c6d914c4b8d9ca``)."""
    table = _CRC64_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


# --- RDB primitives ---------------------------------------------------------------------------

_RDB_ENC_INT8 = 0
_RDB_ENC_INT16 = 1
_RDB_ENC_INT32 = 2
_RDB_ENC_LZF = 3


class _Truncated(ValueError):
    pass


def _lzf_decompress(data: bytes, expected_len: int) -> bytes:
    """liblzf's ``lzf_decompress`` (the format Redis uses for compressed RDB strings)."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:  # literal run of ctrl + 1 bytes
            run = ctrl + 1
            if i + run > n:
                raise ValueError("corrupt LZF string in DUMP payload")
            out += data[i : i + run]
            i += run
            continue
        length = ctrl >> 5  # back reference
        if length == 7:
            if i >= n:
                raise ValueError("corrupt LZF string in DUMP payload")
            length += data[i]
            i += 1
        if i >= n:
            raise ValueError("corrupt LZF string in DUMP payload")
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        if ref < 0:
            raise ValueError("corrupt LZF string in DUMP payload")
        for _ in range(length + 2):  # byte by byte: the copy may overlap itself
            out.append(out[ref])
            ref += 1
    if len(out) != expected_len:
        raise ValueError("corrupt LZF string in DUMP payload (length mismatch)")
    return bytes(out)


class _Reader:
    """Cursor over the serialised value (the payload without its 10-byte footer)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise _Truncated("truncated DUMP payload")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def byte(self) -> int:
        return self.take(1)[0]

    def _length_or_encoding(self) -> tuple[int, bool]:
        """``rdbLoadLenByRef``: (value, is_encoded)."""
        first = self.byte()
        kind = (first & 0xC0) >> 6
        if kind == 0:  # 00|XXXXXX
            return first & 0x3F, False
        if kind == 1:  # 01|XXXXXX XXXXXXXX
            return ((first & 0x3F) << 8) | self.byte(), False
        if kind == 3:  # 11|OBKIND: a specially encoded string follows
            return first & 0x3F, True
        if first == 0x80:  # 32-bit big-endian
            return struct.unpack(">I", self.take(4))[0], False
        if first == 0x81:  # 64-bit big-endian
            return struct.unpack(">Q", self.take(8))[0], False
        raise ValueError(f"unknown RDB length encoding 0x{first:02x} in DUMP payload")

    def length(self) -> int:
        value, encoded = self._length_or_encoding()
        if encoded:
            raise ValueError("unexpected encoded value where an RDB length was expected")
        return value

    def string(self, *, decode: bool) -> bytes | None:
        """An RDB string (``rdbGenericLoadStringObject``); ``None`` when ``decode`` is false."""
        value, encoded = self._length_or_encoding()
        if not encoded:
            raw = self.take(value)
            return raw if decode else None
        if value == _RDB_ENC_INT8:
            number = struct.unpack("<b", self.take(1))[0]
        elif value == _RDB_ENC_INT16:
            number = struct.unpack("<h", self.take(2))[0]
        elif value == _RDB_ENC_INT32:
            number = struct.unpack("<i", self.take(4))[0]
        elif value == _RDB_ENC_LZF:
            compressed_len = self.length()
            plain_len = self.length()
            compressed = self.take(compressed_len)
            return _lzf_decompress(compressed, plain_len) if decode else None
        else:
            raise ValueError(f"unknown RDB string encoding {value} in DUMP payload")
        return str(number).encode() if decode else None

    def read_string(self) -> bytes:
        value = self.string(decode=True)
        assert value is not None  # for the type checker: decode=True always returns bytes
        return value

    def skip_string(self) -> None:
        self.string(decode=False)


# --- stream walk ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ConsumerTimes:
    group: bytes
    consumer: bytes
    seen_offset: int
    active_offset: int | None  # None before RDB_TYPE_STREAM_LISTPACKS_3


_STREAM_ID_LEN = 16  # raw 128-bit big-endian stream id
_MS_TIME_LEN = 8


def _walk_stream(body: bytes) -> list[_ConsumerTimes]:
    """Offsets (into ``body``) of every consumer's time fields; ``body`` starts at the type."""
    r = _Reader(body)
    rdb_type = r.byte()
    if rdb_type not in SUPPORTED_STREAM_TYPES:
        raise ValueError(
            f"unsupported DUMP value type {rdb_type}: expected a stream serialised as RDB type "
            f"{', '.join(map(str, SUPPORTED_STREAM_TYPES))} (Redis 5.0-8.6, Valkey 7.2-9.x); "
            "newer stream formats and other key types are not supported"
        )
    v2 = rdb_type >= RDB_TYPE_STREAM_LISTPACKS_2
    v3 = rdb_type >= RDB_TYPE_STREAM_LISTPACKS_3
    v4 = rdb_type >= RDB_TYPE_STREAM_LISTPACKS_4

    for _ in range(r.length()):  # listpacks: (master id, listpack) pairs, copied untouched
        r.skip_string()
        r.skip_string()
    r.length()  # number of entries
    r.length()  # last id ms
    r.length()  # last id seq
    if v2:
        for _ in range(5):  # first id ms/seq, max deleted id ms/seq, entries added
            r.length()

    found: list[_ConsumerTimes] = []
    for _ in range(r.length()):  # consumer groups
        group = r.read_string()
        r.length()  # last delivered id ms
        r.length()  # last delivered id seq
        if v2:
            r.length()  # entries read
        for _ in range(r.length()):  # global PEL: raw id, delivery time, delivery count
            r.take(_STREAM_ID_LEN + _MS_TIME_LEN)
            r.length()
        for _ in range(r.length()):  # consumers
            consumer = r.read_string()
            seen_offset = r.pos
            r.take(_MS_TIME_LEN)
            active_offset = None
            if v3:
                active_offset = r.pos
                r.take(_MS_TIME_LEN)
            pel_count = r.length()
            r.take(pel_count * _STREAM_ID_LEN)  # consumer PEL: raw ids only
            found.append(_ConsumerTimes(group, consumer, seen_offset, active_offset))
    if v4:  # idempotent producers (rdbSaveStreamIdmpEntries), copied untouched
        r.length()  # idmp-duration (s)
        r.length()  # idmp-maxsize
        for _ in range(r.length()):  # producers
            r.skip_string()  # producer id
            for _ in range(r.length()):  # its idempotent ids, oldest first
                r.skip_string()  # idempotent id
                r.length()  # the entry id it produced: ms
                r.length()  # and seq
        r.length()  # iids-added
        r.length()  # iids-duplicates
    if r.pos != len(body):
        raise ValueError(
            f"unexpected {len(body) - r.pos} trailing bytes after the stream value "
            f"(type {rdb_type}): unsupported or corrupt DUMP payload"
        )
    return found


def _shift_time(buf: bytearray, offset: int, ms: int, what: str) -> None:
    (current,) = struct.unpack_from("<q", buf, offset)
    if current <= 0:  # -1: "never active" (7.2+); leave sentinels alone
        return
    shifted = current - ms
    if shifted < 0:
        raise ValueError(f"cannot move {what} ({current} ms) back by {ms} ms: before the epoch")
    struct.pack_into("<q", buf, offset, shifted)


def backdate_payload(payload: bytes, consumers: Mapping[bytes, int]) -> bytes:
    """Return ``payload`` (a stream's DUMP) with the named consumers' times moved back.

    ``consumers`` maps consumer name to milliseconds. Every group's consumer of that name is
    shifted. Raises :class:`ValueError` for a malformed or unsupported payload, a negative
    shift, or a name that no group of the stream has.
    """
    for name, ms in consumers.items():
        if not isinstance(name, bytes):
            raise TypeError(f"consumer names must be bytes, got {type(name).__name__}")
        if ms < 0:
            raise ValueError(f"cannot backdate consumer {name!r} by a negative {ms} ms")
    if len(payload) < 1 + 10:
        raise ValueError("DUMP payload too short")
    body, footer = payload[:-10], payload[-10:]
    rdb_version = int.from_bytes(footer[:2], "little")
    if rdb_version < _MIN_RDB_VERSION:
        raise ValueError(f"unsupported RDB version {rdb_version} in DUMP payload")
    stored_crc = int.from_bytes(footer[2:], "little")
    computed_crc = crc64(payload[:-8])
    if stored_crc not in (0, computed_crc):
        raise ValueError("DUMP payload checksum mismatch")

    found = _walk_stream(body)
    present = {c.consumer for c in found}
    missing = sorted(name for name in consumers if name not in present)
    if missing:
        raise ValueError(f"no consumer named {', '.join(map(repr, missing))} in any group")

    buf = bytearray(payload)
    for entry in found:
        back = consumers.get(entry.consumer)
        if not back:
            continue
        label = f"{entry.group!r}/{entry.consumer!r}"
        _shift_time(buf, entry.seen_offset, back, f"seen-time of {label}")
        if entry.active_offset is not None:
            _shift_time(buf, entry.active_offset, back, f"active-time of {label}")
    buf[-8:] = crc64(bytes(buf[:-8])).to_bytes(8, "little")
    return bytes(buf)


def backdate_consumers(client: redis.Redis, key: bytes, consumers: dict[bytes, int]) -> None:
    """Make ``consumers`` (name -> ms) of every group of stream ``key`` look idle ``ms`` longer.

    Demo/test seeding helper only, never for production data (see the module docstring).
    Runs ``WATCH key; DUMP; PTTL; MULTI; RESTORE key <pttl|0> <payload> REPLACE; EXEC`` and
    retries if the key changed in between. Raises :class:`ValueError` if the key is missing,
    is not a stream in a supported RDB format, or has no consumer of one of the given names.
    """
    if not consumers:
        return
    raw = strip_callbacks(client)
    with raw.pipeline(transaction=True) as pipe:
        for _ in range(_MAX_WATCH_RETRIES):
            try:
                pipe.watch(key)
                payload = pipe.execute_command("DUMP", key)
                if payload is None:
                    raise ValueError(f"no such key: {key!r}")
                pttl = int(pipe.execute_command("PTTL", key))
                new_payload = backdate_payload(payload, consumers)
                pipe.multi()
                pipe.execute_command(
                    "RESTORE", key, pttl if pttl > 0 else 0, new_payload, "REPLACE"
                )
                pipe.execute()
                return
            except WatchError:
                continue
            finally:
                pipe.reset()
    raise RuntimeError(f"{key!r} kept changing; gave up after {_MAX_WATCH_RETRIES} attempts")
