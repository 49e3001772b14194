"""The processing journal the framework workers write and the tests read.

One JSON object a line, appended and fsynced before the handler returns (so before the
framework acknowledges the entry). Bytes are hex strings, so payloads that are not UTF-8
are compared byte for byte. Events:

- ``ready``: the worker is up (written from the framework's start-up hook);
- ``holding``: the handler started on a message marked *hold* and now blocks forever
  (the test SIGKILLs the worker while it holds it; the entry stays in the PEL);
- ``processed``: the handler ran to completion on a message.

Imported by the worker processes, so it uses the standard library only.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any


def hexed_fields(fields: dict[bytes, bytes]) -> list[list[str]]:
    """A stream entry's fields as ``[[key hex, value hex], ...]`` in the entry's order."""
    return [[bytes(k).hex(), bytes(v).hex()] for k, v in fields.items()]


def unhexed_fields(pairs: list[list[str]]) -> dict[bytes, bytes]:
    return {bytes.fromhex(k): bytes.fromhex(v) for k, v in pairs}


def append(path: str, record: dict[str, Any]) -> None:
    """Append one record and fsync it: the test may SIGKILL the writer right after."""
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def wait_for_gate() -> None:
    """Block while ``FW_GATE`` names a file that does not exist yet (see Worker.release)."""
    gate = os.environ.get("FW_GATE")
    while gate and not os.path.exists(gate):
        time.sleep(0.02)


def read(path: str) -> list[dict[str, Any]]:
    """Every complete record of one journal (a torn last line of a killed writer is skipped)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    records = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records
