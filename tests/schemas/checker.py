"""Every JSON output checked against its JSON Schema in docs/schemas/.

The ``cli`` fixture (tests/conftest.py) runs each invocation inside :func:`recording`, which
notes the command and output format of every :class:`pelctl.cli.options.Runtime` built,
then :func:`check_output` validates what was printed: ``-o json`` as one document (a list:
each element), ``-o ndjson`` line by line. So every test that runs a command with
``-o json`` or ``-o ndjson`` (or in a pipe, where ``pending``, ``ghosts``, ``dlq list`` and
``audit tail`` default to NDJSON) also checks its output against the documented schema.
:func:`audit_checker` does the same for every audit line any test writes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"

REPAIR = ("repair-result.json", "repair-result.json#/$defs/line")
# command (Runtime.command) -> (schema of a -o json document, schema of one -o ndjson line
# and of each element of a -o json list). None: that form is never printed.
OUTPUTS: dict[str, tuple[str | None, str]] = {
    "streams": (None, "streams.json"),
    "inspect": ("inspect.json", "inspect.json"),
    "pending": (None, "pending.json"),
    "histogram": ("histogram.json", "histogram.json#/$defs/record"),
    # the listing, --count, or --fix (a repair)
    "ghosts": ("#ghosts-document", "#ghosts-line"),
    "dlq-list": (None, "dlq-list.json"),
    "trace": ("trace.json", "trace.json"),
    "find": (None, "find.json"),
    "dlq-show": ("dlq-show.json", "dlq-show.json"),
    "dlq-stats": ("dlq-stats.json", "dlq-stats.json"),
    "claim": REPAIR,
    "ack": REPAIR,
    "requeue": REPAIR,
    "dlq-move": REPAIR,
    "consumers-prune": REPAIR,
    "trim": ("trim.json", "trim.json"),
    "apply": ("#apply", "#apply"),
    "dlq-replay": REPAIR,
    "dlq-purge": REPAIR,
    "audit-tail": (None, "audit-line.json"),
    "config-show": ("config-show.json", "config-show.json"),
    "config-contexts": (None, "config-contexts.json"),
    "config-current-context": ("config-current-context.json", "config-current-context.json"),
    "config-use-context": ("config-use-context.json", "config-use-context.json"),
    "version": ("version.json", "version.json"),
    "demo-status": ("demo-status.json", "demo-status.json"),
    "reclaim": ("reclaim-summary.json", "reclaim-summary.json"),
    # -o ndjson prints the same one document on one line
    "snapshot": ("snapshot.json", "snapshot.json"),
    "analyze": ("analyze.json", "analyze.json"),
}
# Commands whose output is text whatever -o says (a path, a URL, an export line).
NOT_JSON = frozenset({"config-path", "demo-up", "demo-down", "demo-env", "tui", "exporter"})
SYNTHETIC = {
    # pelctl apply: a repair's result, or a trim's (a trim plan file)
    "#apply": {"anyOf": [{"$ref": "repair-result.json"}, {"$ref": "trim.json"}]},
    "#ghosts-document": {
        "anyOf": [{"$ref": "ghosts.json#/$defs/counts"}, {"$ref": "repair-result.json"}]
    },
    "#ghosts-line": {
        "anyOf": [{"$ref": "ghosts.json"}, {"$ref": "repair-result.json#/$defs/line"}]
    },
}


@functools.cache
def documents() -> dict[str, Any]:
    return {path.name: json.loads(path.read_text()) for path in sorted(SCHEMAS.glob("*.json"))}


def inline(schema: Any, base: str) -> Any:
    """``schema`` with every ``$ref`` replaced by what it points to (an ``allOf`` member,
    which keeps the semantics of ``unevaluatedProperties``): resolving references through
    the registry costs ~2 ms a record, too slow for a 10,000-line NDJSON output. The
    schemas have no recursive references."""
    if isinstance(schema, list):
        return [inline(s, base) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: inline(v, base) for k, v in schema.items() if k not in ("$ref", "$defs", "$id")}
    ref = schema.get("$ref")
    if ref is not None:
        target, where = resolve(ref, base)
        out["allOf"] = [*out.get("allOf", []), inline(target, where)]
    return out


def resolve(ref: str, base: str) -> tuple[Any, str]:
    name, _, pointer = ref.partition("#")
    name = name or base
    node: Any = documents()[name]
    for part in filter(None, pointer.split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node, name


@functools.cache
def validator(ref: str) -> Draft202012Validator:
    """A validator for ``ref``: a file (``streams.json``) or a pointer into one."""
    schema = inline(SYNTHETIC.get(ref) or {"$ref": ref}, "")
    return Draft202012Validator(schema)


def errors(ref: str, value: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in sorted(validator(ref).iter_errors(value), key=lambda e: list(e.absolute_path))
    ]


def check(ref: str, value: Any, what: str = "output") -> None:
    found = errors(ref, value)
    if found:
        shown = json.dumps(value, ensure_ascii=False)[:600]
        raise AssertionError(
            f"{what} does not match docs/schemas/{ref}:\n  "
            + "\n  ".join(found[:10])
            + f"\n{shown}"
        )


@contextmanager
def recording() -> Iterator[list[tuple[str, str]]]:
    """Note ``(command, format)`` of every Runtime built inside the block."""
    from pelctl.cli.options import Runtime

    seen: list[tuple[str, str]] = []
    original = Runtime.__init__

    def init(self, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        seen.append((self.command, self.out.fmt))

    with mock.patch.object(Runtime, "__init__", init):
        yield seen


# Items of one output validated: all of the first FIRST, then one in EVERY, and the last
# (jsonschema takes ~1 ms a record here; a 100,000-line --all stream repeats its shapes).
FIRST, EVERY = 200, 50


def _sampled(n: int, total: int) -> bool:
    return n < FIRST or n % EVERY == 0 or n == total - 1


def check_output(seen: list[tuple[str, str]], stdout: str, exit_code: int) -> None:
    """Validate stdout of one invocation against the schema of its command."""
    if not seen or not stdout.strip():
        return
    command, fmt = seen[-1]
    if fmt not in ("json", "ndjson") or command in NOT_JSON:
        return
    if command not in OUTPUTS:
        raise AssertionError(
            f"pelctl {command} printed {fmt} but no schema is declared for "
            "it (tests/schemas/checker.py OUTPUTS, docs/schemas/)"
        )
    doc_ref, line_ref = OUTPUTS[command]
    if fmt == "ndjson":
        lines = [line for line in stdout.splitlines() if line.strip()]
        for n, line in enumerate(lines):
            try:
                value = json.loads(line)
            except ValueError:
                if exit_code == 0:
                    raise AssertionError(
                        f"pelctl {command} -o ndjson: line {n + 1} is not JSON: {line[:200]!r}"
                    ) from None
                return  # an error cut the output short
            ref = WATCH_FRAME if _is_frame_marker(value) else line_ref
            if ref == WATCH_FRAME or _sampled(n, len(lines)):
                check(ref, value, f"pelctl {command} -o ndjson, line {n + 1}")
        return
    try:
        value = json.loads(stdout)
    except ValueError:
        frames = _watch_frames(stdout)
        if frames is None:
            if exit_code == 0:
                raise AssertionError(
                    f"pelctl {command} -o json is not one JSON document: {stdout[:300]!r}"
                ) from None
            return
        for frame in frames:  # --watch -o json: one document a line
            _check_document(command, doc_ref, line_ref, frame)
        return
    _check_document(command, doc_ref, line_ref, value)


WATCH_FRAME = "watch-frame.json"


def _is_frame_marker(value: Any) -> bool:
    """The marker --watch -o ndjson writes before each frame's records."""
    return isinstance(value, dict) and "frame" in value and "at" in value


def _watch_frames(stdout: str) -> list[Any] | None:
    """--watch -o json: each non-empty line one whole document (None: it is not that)."""
    try:
        return [json.loads(line) for line in stdout.splitlines() if line.strip()]
    except ValueError:
        return None


def _check_document(command: str, doc_ref: str | None, line_ref: str, value: Any) -> None:
    if isinstance(value, list):
        for n, item in enumerate(value):
            if _sampled(n, len(value)):
                check(line_ref, item, f"pelctl {command} -o json, item {n}")
    elif doc_ref is None:
        raise AssertionError(f"pelctl {command} -o json should print a list")
    else:
        check(doc_ref, value, f"pelctl {command} -o json")


def check_logs(stderr: str) -> None:
    """JSON log lines (reclaim and exporter --log-format json) on stderr."""
    for line in stderr.splitlines():
        if line.startswith("{") and '"event"' in line:
            record = json.loads(line)
            schema = "exporter-log.json" if record.get("logger") == "pelctl.exporter" else None
            check(schema or "reclaim-log.json", record, "a JSON log line")


@contextmanager
def audit_checker() -> Iterator[list[str]]:
    """Validate every audit record appended inside the block (any surface); problems are
    collected (an exception inside the mutation would hide them) and returned."""
    from pelctl.core import audit

    problems: list[str] = []
    original = audit.append

    def append(record: dict[str, Any], path: Path | None = None) -> Path:
        # Records pelctl built (tests of the file mechanics append made-up ones).
        found = errors("audit-line.json", record) if "surface" in record else []
        if found:
            problems.append(
                f"audit line does not match docs/schemas/audit-line.json: "
                f"{found[:5]}\n{json.dumps(record)[:600]}"
            )
        return original(record, path)

    with mock.patch.object(audit, "append", append):
        yield problems
