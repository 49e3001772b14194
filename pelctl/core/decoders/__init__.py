"""Payload decoders: a stream entry's fields shown as the message they carry.

A framework writes its own envelope into a stream entry: FastStream 0.7 one ``__data__``
field holding a binary frame (headers and body), taskiq-redis one ``data`` field holding the
task as JSON. :func:`decode` turns such fields into a :class:`Decoded` view (the format's
name, a JSON-able object, a one-line summary, notes on what could not be read), or ``None``
when no decoder recognises the entry: then every surface shows the raw fields escaped, as
it always did. The raw fields are never replaced; the decoded view is shown next to them.

The registry (docs/formats.md, "Payload decoders"):

- decoders installed by other distributions under the entry-point group ``pelctl.decoders``
  are tried first, in the order of their names, so a team's decoder (msgpack, protobuf) can
  take an entry before the built-in ones;
- then the built-in ``faststream``, ``taskiq`` and ``json`` decoders.

A decoder is called with the entry's fields (``((name, value), ...)``, bytes, in order) and
returns a :class:`Decoded` or ``None`` (not its format). It must never raise; one that does
(or returns something else) is skipped for that entry and recorded in :func:`problems`, and
the next decoder is tried. Entry points are loaded lazily, at the first :func:`decode`: a
command that shows no payload never scans the installed distributions.

Decoding is bounded: a value over :data:`MAX_DECODE_BYTES` is not decoded, JSON nested
deeper than :data:`MAX_DEPTH` is text, and frame offsets and lengths are checked against the
value before anything is read (never trusted).

No UI library is imported here (core).

The modules: :mod:`~pelctl.core.decoders.common` (``Decoded``, the bounds, the helpers),
:mod:`~pelctl.core.decoders.faststream`, :mod:`~pelctl.core.decoders.taskiq`,
:mod:`~pelctl.core.decoders.json_values` (the built-in decoders) and
:mod:`~pelctl.core.decoders.registry` (entry points, the order, ``decode``). This package
re-exports the names docs/formats.md gives other distributions (``from pelctl.core.decoders
import Decoded``) and those every surface calls; pelctl's own modules import from the module
that defines a name.
"""

from __future__ import annotations

from pelctl.core.decoders.common import (
    MAX_DECODE_BYTES,
    MAX_DEPTH,
    NOT_JSON,
    PREVIEW_CHARS,
    Decoded,
    DecodeFn,
    Fields,
    json_preview,
    parse_json,
    text_preview,
)
from pelctl.core.decoders.faststream import decode_faststream, read_frame
from pelctl.core.decoders.json_values import decode_json
from pelctl.core.decoders.registry import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    decode,
    problems,
    registered,
    reset,
)
from pelctl.core.decoders.taskiq import decode_taskiq

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "MAX_DECODE_BYTES",
    "MAX_DEPTH",
    "NOT_JSON",
    "PREVIEW_CHARS",
    "DecodeFn",
    "Decoded",
    "Fields",
    "decode",
    "decode_faststream",
    "decode_json",
    "decode_taskiq",
    "json_preview",
    "parse_json",
    "problems",
    "read_frame",
    "registered",
    "reset",
    "text_preview",
]
