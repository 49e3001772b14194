"""The local audit log's lines that touched one of the chain's ids on this server, read line
by line with flat memory. A log that is missing or cannot be read is said so in the result,
never an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pelctl.core.audit import parse_line
from pelctl.core.trace.model import MAX_AUDIT_LINES, AuditLine, AuditRead


def read_audit(path: Path | None, chain: dict[bytes, set[bytes]], server: str) -> AuditRead:
    """The audit lines that touched one of ``chain``'s ids (per stream) on ``server``.

    The log is read line by line (memory: one line, and the lines kept); a line is parsed
    only when it holds one of the ids. A log that is missing or cannot be read is said so in
    the result, never an error: the rest of the trace stands without it."""
    from collections import deque

    from pelctl.base.binary import unescape
    from pelctl.base.paths import audit_path

    log = path or audit_path()
    wanted = [i for ids in chain.values() for i in ids]
    kept: deque[AuditLine] = deque(maxlen=MAX_AUDIT_LINES)
    lines = other = matched = 0
    try:
        with open(log, "rb") as fh:
            for line in fh:
                lines += 1
                if not any(i in line for i in wanted):
                    continue
                record = parse_line(line)
                if record is None:
                    continue
                stream = record.get("stream")
                if not isinstance(stream, str):
                    continue
                ids = chain.get(unescape(stream))
                if not ids:
                    continue
                touched = _ids_of(record) & {i.decode() for i in ids}
                if not touched:
                    continue
                if record.get("server") != server:
                    other += 1
                    continue
                matched += 1
                kept.append(_audit_line(record, touched))
    except FileNotFoundError:
        return AuditRead(str(log), "missing")
    except OSError as err:
        return AuditRead(str(log), "unreadable", err.strerror or str(err), lines)
    return AuditRead(
        str(log), "read", None, lines, tuple(kept), other, truncated=matched > len(kept)
    )


def _ids_of(record: dict[str, Any]) -> set[str]:
    out = {i for i in record.get("ids") or () if isinstance(i, str)}
    for failed in record.get("failed") or ():
        if isinstance(failed, dict) and isinstance(failed.get("id"), str):
            out.add(failed["id"])
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _audit_line(record: dict[str, Any], ids: set[str]) -> AuditLine:
    when = _text(record.get("time"))
    outcomes = record.get("outcomes")
    counted = (
        tuple((str(k), v) for k, v in outcomes.items() if isinstance(v, int))
        if isinstance(outcomes, dict)
        else ()
    )
    context = record.get("context")
    error = record.get("error")
    # Lines written by pelctl 0.1 name the repair "command".
    action = _text(record.get("action")) or _text(record.get("command"))
    return AuditLine(
        time=when,
        at_ms=_iso_ms(when),
        user=_text(record.get("user")),
        host=_text(record.get("host")),
        surface=_text(record.get("surface")),
        context=context if isinstance(context, str) else None,
        action=action,
        stream=_text(record.get("stream")),
        group=_text(record.get("group")),
        dry_run=record.get("dry_run") is True,
        ids=tuple(sorted(ids)),
        outcomes=counted,
        error=error if isinstance(error, str) else None,
    )


def _iso_ms(text: str) -> int:
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0
