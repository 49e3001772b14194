"""The dead-letter entry: its fields, who writes them, how they are read (docs/formats.md,
"Dead-letter entry").

A dead letter is the original entry's fields, untouched (lineage fields included), followed
by the envelope ``<prefix>dlq_source``, ``_group``, ``_id``, ``_owner``, ``_deliveries``,
``_idle_ms``, ``_reason``, ``_at`` (``_`` by default; ``--field-prefix``). Every writer and
every reader goes through this module:

- the repair scripts write it in ``pelctl/redis/lua/_prelude.lua`` (``add_envelope``: the
  one-script ``dlq move`` and ``requeue --max-retries``, the ordered path's ``lease.lua``;
  the reclaim loop and :class:`pelctl.consumer.ReliableConsumer` run those scripts), and
  :func:`write` is its Python twin for servers without Lua
  (:func:`pelctl.reclaim.settle.settle_unscripted`); a test reads what each writes back with
  :func:`parse_entry`;
- ``dlq list`` / ``show`` / ``stats`` / ``replay`` read it with :func:`parse_entry`, the
  Parquet snapshot (:mod:`pelctl.spark.batches`) with :func:`split`.

The names of dead-letter *streams* (``<stream>:dlq``) are here too (:func:`default_dlq`,
:func:`is_dlq_name`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from pelctl.core import lineage
from pelctl.core.models import id_ms
from pelctl.redis.replies import field_pairs

# The envelope's fields in the order they are written, without their ``<prefix>dlq_``.
ENVELOPE = ("source", "group", "id", "owner", "deliveries", "idle_ms", "reason", "at")
DLQ_SUFFIX = b":dlq"

Pairs = tuple[tuple[bytes, bytes], ...]


def default_dlq(stream: bytes) -> bytes:
    """``{STREAM}:dlq``: the stream's name plus ``:dlq`` (``orders`` -> ``orders:dlq``)."""
    return stream + DLQ_SUFFIX


def is_dlq_name(key: bytes) -> bool:
    """The one rule for "this stream is a dead-letter stream" when nobody named it: its name
    is ``<stream>:dlq`` (the default of ``dlq move``, ``requeue --max-retries``, the reclaim
    loop). Whatever its entries hold, and however empty it is: a producer that can write
    ``_dlq_source`` into a stream does not make it a DLQ. ``streams``' KIND column, the TUI,
    ``dlq list``/``stats``/``replay``/``purge`` without a DLQ argument all use it; any other
    dead-letter stream is used when named."""
    return len(key) > len(DLQ_SUFFIX) and key.endswith(DLQ_SUFFIX)


def dlq_source_of(key: bytes) -> bytes | None:
    """The stream a conventionally named DLQ belongs to: ``orders:dlq`` -> ``orders``."""
    return key[: -len(DLQ_SUFFIX)] if is_dlq_name(key) else None


def head(prefix: str = "_") -> bytes:
    """What every envelope field name starts with: ``_dlq_`` for the field prefix ``_``."""
    return prefix.encode() + b"dlq_"


def field_prefix_of(envelope_head: bytes) -> str:
    """The field prefix of the lineage fields for an envelope head (``_dlq_`` -> ``_``); a
    head that does not end in ``dlq_`` is its own."""
    base = envelope_head[: -len(b"dlq_")] if envelope_head.endswith(b"dlq_") else envelope_head
    return base.decode(errors="surrogateescape")


@cache
def envelope_names(envelope_head: bytes = b"_dlq_") -> dict[bytes, str]:
    """``{b"_dlq_source": "source", ...}``: the envelope's field names for a head."""
    return {envelope_head + name.encode(): name for name in ENVELOPE}


def marker_field(prefix: str = "_") -> bytes:
    """The field a replayed copy carries: the DLQ id it was replayed from."""
    return prefix.encode() + b"replayed_from"


def write(
    fields: Sequence[bytes],
    prefix: str,
    stream: bytes,
    group: bytes,
    entry_id: bytes,
    owner: bytes,
    deliveries: int,
    idle_ms: int,
    reason: str,
    at_ms: int,
) -> list[bytes]:
    """The dead-letter entry: original fields untouched, then the envelope (in
    :data:`ENVELOPE` order). Python twin of ``add_envelope`` in ``_prelude.lua``."""
    values = (
        stream,
        group,
        entry_id,
        owner,
        str(deliveries).encode(),
        str(idle_ms).encode(),
        reason.encode(),
        str(at_ms).encode(),
    )
    out = list(fields)
    for name, value in zip(envelope_names(head(prefix)), values, strict=True):
        out += [name, value]
    return out


def split(
    flat: Sequence[bytes], envelope_head: bytes = b"_dlq_"
) -> tuple[dict[str, bytes], list[tuple[bytes, bytes]], Pairs]:
    """A raw ``[field, value, ...]`` as (envelope ``{"source": ..., ...}``, the original
    fields in order, every field in order).

    A field name repeated (an entry dead-lettered twice with ``--keep-envelope`` in between)
    takes its last value: the newest envelope is the one appended last.
    """
    names = envelope_names(envelope_head)
    env: dict[str, bytes] = {}
    fields: list[tuple[bytes, bytes]] = []
    raw = field_pairs(flat)
    for k, v in raw:
        name = names.get(k)
        if name is None:
            fields.append((k, v))
        else:
            env[name] = v
    return env, fields, raw


def number(env: dict[str, bytes], name: str) -> int | None:
    """An envelope field as a number (None when missing or not one)."""
    try:
        return int(env[name])
    except (KeyError, ValueError):
        return None


def is_dead_letter(flat: Sequence[bytes], prefix: str = "_") -> bool:
    """Whether an *entry* is a dead letter: it carries ``<prefix>dlq_source``; a copy
    replayed with ``--keep-envelope`` does too, but ends with the replay marker field (the
    envelope of a dead letter always comes last). It never decides whether a *stream* is a
    DLQ (:func:`is_dlq_name` does)."""
    if head(prefix) + b"source" not in flat[0::2]:
        return False
    return not (len(flat) >= 2 and flat[-2] == marker_field(prefix))


@dataclass(frozen=True, slots=True)
class DlqEntry:
    """One dead-letter entry: its envelope parsed, its original fields apart, its lineage.

    ``original_id`` is the message's first id (the ``<prefix>original_id`` among the original
    fields, else ``_dlq_id``); ``dlq_id`` is ``_dlq_id`` (the id of the copy that was
    moved); ``deliveries`` is ``_dlq_deliveries`` (the moved copy's delivery count) and
    ``prior_deliveries`` the ``<prefix>prior_deliveries`` of earlier copies:
    :attr:`total_deliveries` is every delivery of the message."""

    id: bytes
    source: bytes | None
    group: bytes | None
    original_id: bytes | None
    owner: bytes | None
    deliveries: int | None
    idle_ms: int | None
    reason: str | None
    at_ms: int | None
    fields: Pairs  # the original fields (envelope removed), in order
    raw: Pairs = ()  # every field of the DLQ entry, envelope included, in order
    dlq: bytes = b""
    dlq_id: bytes | None = None
    prior_deliveries: int | None = None

    @property
    def time_ms(self) -> int:
        """When it was dead-lettered: ``_dlq_at``, else the DLQ id's time."""
        return self.at_ms if self.at_ms is not None else id_ms(self.id)

    @property
    def enveloped(self) -> bool:
        return self.source is not None

    @property
    def total_deliveries(self) -> int | None:
        """Deliveries of every copy of the message: prior + ``_dlq_deliveries`` (None when
        neither is known)."""
        if self.deliveries is None and self.prior_deliveries is None:
            return None
        return (self.prior_deliveries or 0) + (self.deliveries or 0)


def parse_entry(
    entry_id: bytes, flat: Sequence[bytes], prefix: str = "_", dlq: bytes = b""
) -> DlqEntry:
    """A DLQ entry from its raw ``[field, value, ...]`` (see :func:`split`)."""
    env, fields, raw = split(flat, head(prefix))
    reason = env.get("reason")
    deliveries = number(env, "deliveries")
    original_id, prior = lineage.of_dead_letter(fields, env.get("id"), deliveries, prefix)
    return DlqEntry(
        id=entry_id,
        source=env.get("source"),
        group=env.get("group"),
        original_id=original_id,
        owner=env.get("owner"),
        deliveries=deliveries,
        idle_ms=number(env, "idle_ms"),
        reason=reason.decode("utf-8", "replace") if reason is not None else None,
        at_ms=number(env, "at"),
        fields=tuple(fields),
        raw=raw,
        dlq=dlq,
        dlq_id=env.get("id"),
        prior_deliveries=prior,
    )
