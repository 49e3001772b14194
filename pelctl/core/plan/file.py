"""The plan file on disk: its layout (:func:`dumps`: one item a line, easy to review),
:func:`save` (sealed, atomic, mode 0600: it names entries) and :func:`load` (refused, exit 2:
too big, not a whole plan, not sealed, changed, sealed with another key, or a field that is
not what pelctl writes)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pelctl.base.errors import ConfigError, OperationFailed, PelctlError, UsageError
from pelctl.core.mutations.declaration import Plan
from pelctl.core.mutations.model import Item
from pelctl.core.plan.document import FORMAT, ITEM_ACTIONS, MAX_ITEMS, READABLE, from_json, to_json
from pelctl.core.plan.sealing import NARROW_HINT, PlanRefused, check_seal, seal

MAX_BYTES = 8 * 1024 * 1024  # with MAX_ITEMS, the caps of a plan file


def dumps(doc: dict[str, Any]) -> bytes:
    """The file's layout: one top-level key a line, one item a line (easy to review)."""
    lines = []
    for key, value in doc.items():
        if key == "items" and value:
            body = ",\n".join("  " + json.dumps(i, ensure_ascii=False) for i in value)
            text = "[\n" + body + "\n ]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        lines.append(f" {json.dumps(key)}: {text}")
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def save(plan: Plan[Item], path: str | os.PathLike[str]) -> Path:
    """Seal the plan and write it atomically (temp file + rename), mode 0600: it names
    entries. Refused beyond :data:`MAX_ITEMS` items or :data:`MAX_BYTES`."""
    if plan.action not in ITEM_ACTIONS:
        raise UsageError(
            f"{plan.action} plans cannot be saved to a file (plan files hold "
            f"{', '.join(ITEM_ACTIONS)})"
        )
    if not plan.server_id:
        raise UsageError(
            "the server does not report a run_id (INFO server): a plan file "
            "could not be bound to it",
            hint="run the repair directly, after a --dry-run",
        )
    too_big = "narrow it (--limit N, --consumer, --idle: several smaller plans), or run the "
    too_big += "repair directly after a --dry-run"
    if len(plan.items) > MAX_ITEMS:
        raise UsageError(
            f"the plan has {len(plan.items):,} items, more than the "
            f"{MAX_ITEMS:,} a plan file may hold",
            hint=too_big,
        )
    blob = dumps(seal(to_json(plan)))
    if len(blob) > MAX_BYTES:
        raise UsageError(
            f"the plan would take {len(blob):,} bytes, more than the {MAX_BYTES:,} a plan file may",
            hint=too_big,
        )
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".plan-", suffix=".json", dir=target.parent)
    except OSError as err:
        raise OperationFailed(
            f"cannot write the plan file {target}: {err.strerror or err}"
        ) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise OperationFailed(
            f"cannot write the plan file {target}: {err.strerror or err}"
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike[str]) -> Plan[Item]:
    """Read, check the seal, validate. Refused (exit 2): too big, not a whole plan, not
    sealed, changed, sealed with another key, or a field that is not what pelctl writes."""
    source = Path(path).expanduser()
    try:
        with open(source, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            blob = b"" if size > MAX_BYTES else fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"plan file {source} not found") from None
    except OSError as err:
        raise ConfigError(f"cannot read plan file {source}: {err.strerror or err}") from None
    if size > MAX_BYTES or len(blob) > MAX_BYTES:
        raise PlanRefused(
            f"plan file {source} is larger than the {MAX_BYTES:,} bytes a plan may take",
            hint=NARROW_HINT,
        )
    try:
        data = json.loads(blob.decode("utf-8"))
    except ValueError as err:
        raise ConfigError(
            f"cannot read plan file {source}: not a whole JSON document "
            f"(truncated or damaged): {err}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f'{source} is not a valid pelctl plan (no "format": "{FORMAT}")')
    if data.get("version") == 1:
        raise PlanRefused(
            f"{source} was made by an older pelctl: version 1 plans are not sealed",
            hint="make a new plan with --plan-out",
        )
    if data.get("version") not in READABLE:
        raise ConfigError(
            f"{source}: unsupported plan version {data.get('version')!r:.20} "
            f"(this pelctl reads versions "
            f"{', '.join(map(str, READABLE))})"
        )
    check_seal(data, f"plan {source}")
    try:
        return from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as err:
        raise ConfigError(f"{source} is not a valid pelctl plan: {err}") from None
    except PelctlError as err:
        raise ConfigError(f"{source} is not a valid pelctl plan: {err.message}") from None
