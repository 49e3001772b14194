"""Lock keys (``--lock-key``, a context's ``lock_key``): the key a worker holds while it
processes an entry. A held lock makes its consumer alive (:mod:`pelctl.core.liveness`) and its
entry off limits to the entry repairs (:mod:`pelctl.core.repairs`)."""

from __future__ import annotations

import re

from pelctl.base.errors import UsageError

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(stream|group|id|consumer)\}")


def lock_key(pattern: str, stream: bytes, group: bytes, entry_id: bytes, owner: bytes) -> bytes:
    """Render ``--lock-key``: ``{stream} {group} {id} {consumer}`` are replaced, ``{{``/``}}``
    are literal braces, any other ``{...}`` is kept as written (a cluster hash tag)."""
    values = {"stream": stream, "group": group, "id": entry_id, "consumer": owner}
    out = bytearray()
    pos = 0
    for m in _PLACEHOLDER.finditer(pattern):
        out += pattern[pos : m.start()].encode()
        token = m.group(0)
        out += b"{" if token == "{{" else b"}" if token == "}}" else values[m.group(1)]
        pos = m.end()
    out += pattern[pos:].encode()
    return bytes(out)


def check_lock_pattern(pattern: str) -> None:
    if "{id}" not in pattern:
        raise UsageError(
            f"--lock-key {pattern!r} has no {{id}}: one lock would cover every entry",
            hint="e.g. --lock-key 'lock:{stream}:{id}'",
        )
