"""The audit log: one JSON line per mutation, appended to :func:`pelctl.base.paths.audit_path`.

The file is created with mode 0600 (and tightened to 0600 if it was looser), its directory
with 0700. Server URLs are redacted; the parameters recorded are the repair's targets and options
(never the command line, which may hold a URL with a password).
Each line (keys in this order; see docs/safety.md and docs/schemas/audit-line.json)::

    {"time": "2025-01-01T03:12:09.123Z", "user": "alice", "host": "ops-1", "pid": 4242,
     "surface": "cli", "context": "prod", "server": "redis://:***@redis:6379/0",
     "action": "requeue", "stream": "orders", "group": "billing", "dry_run": false,
     "params": {"targets": {"min_idle_ms": 3600000, ...}, "options": {...}},
     "matched": 1204, "applied": 1198, "skipped": 6, "failed_count": 0,
     "outcomes": {"requeued": 1198, "alive": 3, "not-pending": 3}, "interrupted": false,
     "ids": ["1700000000000-0", ...], "id_count": 1198, "failed": []}

The counts, ``outcomes`` and ``failed`` are the keys of the mutation's JSON result, with
the same meaning (:func:`failed_list`): ``failed`` lists at most :data:`MAX_FAILED` items
and ``failed_count`` counts them all. ``ids`` lists the ids (or consumer names) the mutation
changed, at most :data:`MAX_IDS` of them (the first), and ``id_count`` counts them all: a list
and its count, like ``failed`` and ``failed_count``.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import stat
import time
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pelctl.base.binary import escape
from pelctl.base.errors import NotAudited, OperationFailed
from pelctl.base.paths import audit_path, state_dir
from pelctl.core.mutations.outcomes import RepairResult

MAX_IDS = 1_000
MAX_FAILED = 100


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (containers): fall back to the uid
        return str(os.getuid())


def failed_list(result: RepairResult, limit: int | None = None) -> list[dict[str, str]]:
    """``failed`` of results and audit lines alike: ``{"id", "reason"}`` per failed item
    (``reason``: its outcome, then the detail), at most ``limit`` of them."""
    items = result.failed if limit is None else result.failed[:limit]
    return [
        {"id": escape(f.id), "reason": f.outcome + (f": {f.detail}" if f.detail else "")}
        for f in items
    ]


def summarize_ids(ids: Sequence[bytes]) -> list[str]:
    """``ids`` of an audit line: the first :data:`MAX_IDS` (``id_count`` counts them all)."""
    return [escape(i) for i in ids[:MAX_IDS]]


def entry(
    result: RepairResult,
    *,
    server: str,
    context: str | None = None,
    params: dict[str, Any] | None = None,
    surface: str = "cli",
    secrets: tuple[str, ...] = (),
    plan_file: str | None = None,
) -> dict[str, Any]:
    """The audit record of one mutation (``server`` must already be redacted)."""
    from pelctl.redis.url import redact_text

    now = time.time()
    record: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        + f".{int(now * 1000) % 1000:03d}Z",
        "user": _user(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "surface": surface,
        "context": context,
        "server": redact_text(server, secrets),
        "action": result.action,
        "stream": escape(result.stream),
        "group": escape(result.group),
        "dry_run": result.dry_run,
        "params": params,
        "matched": result.matched,
        "applied": result.applied,
        "skipped": result.skipped,
        "failed_count": len(result.failed),
        "outcomes": result.outcome_counts(),
        "interrupted": result.interrupted,
        "ids": summarize_ids(result.applied_ids),
        "id_count": len(result.applied_ids),
        "failed": failed_list(result, MAX_FAILED),
    }
    if plan_file:
        record["plan_file"] = plan_file
    return record


def error_entry(
    action: str,
    stream: bytes,
    group: bytes,
    error: BaseException,
    *,
    server: str,
    context: str | None = None,
    params: dict[str, Any] | None = None,
    surface: str = "cli",
    secrets: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The audit record of a mutation that stopped on an error (some items may be done)."""
    from pelctl.redis.url import redact_text

    now = time.time()
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
        + f".{int(now * 1000) % 1000:03d}Z",
        "user": _user(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "surface": surface,
        "context": context,
        "server": redact_text(server, secrets),
        "action": action,
        "stream": escape(stream),
        "group": escape(group),
        "dry_run": False,
        "params": params,
        "error": redact_text(str(error) or type(error).__name__, secrets),
    }


def _prepare(path: Path) -> None:
    parent = path.parent
    created = not parent.exists()
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if created or parent == state_dir():
        try:
            st = parent.stat()
            if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) != 0o700:
                os.chmod(parent, 0o700)
        except OSError:
            pass


def ensure_writable(path: Path | None = None) -> Path:
    """Fail before mutating if the audit line could not be written afterwards."""
    path = path or audit_path()
    try:
        _prepare(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.close(fd)
    except OSError as err:
        raise OperationFailed(
            f"cannot write the audit log {path}: {err.strerror or err}",
            hint="fix its permissions or point PELCTL_AUDIT_LOG at a writable file",
        ) from None
    return path


def append(record: dict[str, Any], path: Path | None = None) -> Path:
    """Append one line (one write(2) on an O_APPEND descriptor), mode 0600.

    Raises ``OSError`` when the line could not be written whole (a full disk, a file-size
    limit, the file replaced by a directory): callers that already changed something turn it
    into :class:`~pelctl.base.errors.NotAudited` with :func:`not_audited`. A line left
    unfinished by an earlier failure is closed first, so it never swallows this one.
    """
    path = path or audit_path()
    _prepare(path)
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        st = os.fstat(fd)
        if stat.S_IMODE(st.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        if st.st_size and _last_byte(path, st.st_size) != b"\n":
            line = b"\n" + line
        view = memoryview(line)
        while view:
            # A short write (a size limit or a full disk reached mid-line) is followed by
            # a write that raises the real error (EFBIG, ENOSPC).
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


def _last_byte(path: Path, size: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(size - 1)
            return fh.read(1)
    except OSError:
        return b"\n"


def not_audited(err: OSError, *, action: str, applied: int, hint: str = "") -> NotAudited:
    """The :class:`NotAudited` error of a mutation that changed things but whose audit
    line failed (exit 6).

    Its message names the audit log and the OS error and says the change WAS applied."""
    path = audit_path()
    why = err.strerror or str(err) or type(err).__name__
    if applied:
        what = f"{action} WAS applied ({applied:,} changed) but NOT audited"
    else:
        what = f"{action} ran (nothing changed) but was NOT audited"
    return NotAudited(
        f"{what}: cannot write the audit log {path}: {why}",
        hint=hint
        or "the result above is the only record: keep it; then free space or fix the file, "
        "or point PELCTL_AUDIT_LOG at a writable file",
        path=str(path),
        error=err,
        applied=applied,
    )


def record(result: RepairResult, **kwargs: Any) -> Path:
    """Build and append the audit line of ``result`` (see :func:`entry` for the arguments)."""
    path = kwargs.pop("path", None)
    return append(entry(result, **kwargs), path)


def tail(n: int = 20, path: Path | None = None) -> list[dict[str, Any]]:
    """The last ``n`` records (lines that are not JSON are skipped)."""
    path = path or audit_path()
    if not path.exists():
        return []
    lines: deque[bytes] = deque(maxlen=n)
    with open(path, "rb") as fh:
        for line in _lines_from_end(fh, n):
            lines.appendleft(line)
    return [r for r in (parse_line(line) for line in lines) if r is not None]


def _lines_from_end(fh: Any, n: int, block: int = 65_536) -> Iterator[bytes]:
    """Complete lines, last first, reading backwards in blocks (the log may be large)."""
    fh.seek(0, os.SEEK_END)
    pos = fh.tell()
    buf = b""
    found = 0
    while pos > 0 and found < n:
        step = min(block, pos)
        pos -= step
        fh.seek(pos)
        buf = fh.read(step) + buf
        parts = buf.split(b"\n")
        buf = parts[0]
        for line in reversed(parts[1:]):
            if line.strip():
                found += 1
                yield line
                if found >= n:
                    return
    if buf.strip() and found < n:
        yield buf


def follow(path: Path | None = None, poll: float = 0.5) -> Iterator[dict[str, Any]]:
    """New records as they are appended (``audit tail -f``)."""
    path = path or audit_path()
    pos = path.stat().st_size if path.exists() else 0
    pending = b""
    while True:
        if path.exists():
            size = path.stat().st_size
            if size < pos:  # rotated or truncated
                pos = 0
            if size > pos:
                with open(path, "rb") as fh:
                    fh.seek(pos)
                    chunk = fh.read(size - pos)
                pos = size
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    parsed = parse_line(line)
                    if parsed is not None:
                        yield parsed
        time.sleep(poll)


def parse_line(line: bytes) -> dict[str, Any] | None:
    """One audit log line as its JSON object; None for a line that is not one."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
