"""taskiq-redis: one ``data`` field holding the task as JSON (``task_id``, ``task_name``,
``args``, ``kwargs``, typed ``labels``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pelctl.core.decoders.common import (
    Decoded,
    Fields,
    finite_float,
    json_preview,
    last_value,
    other_fields,
    parse_json,
)

TASKIQ_FIELD = b"data"
# taskiq.labels.LabelType: 1 any, 2 int, 3 str, 4 float, 5 bool, 6 bytes (base64, kept so)
_LABEL_TYPES: dict[int, Callable[[str], Any]] = {
    2: int,
    4: finite_float,
    5: lambda text: text.lower() == "true",
}


def _label(value: Any, kind: Any) -> Any:
    parse = _LABEL_TYPES.get(kind) if isinstance(kind, int) else None
    if parse is None or not isinstance(value, str):
        return value
    try:
        return parse(value)
    except ValueError:
        return value


def _call(name: str, args: list[Any], kwargs: dict[str, Any], size: int) -> str:
    parts = [json_preview(a, 80, size) for a in args[:8]]
    if len(args) > 8:
        parts.append("…")
    parts += [f"{k}={json_preview(v, 80, size)}" for k, v in list(kwargs.items())[:8]]
    if len(kwargs) > 8:
        parts.append("…")
    return f"{name}({', '.join(parts)})"


def decode_taskiq(fields: Fields) -> Decoded | None:
    value = last_value(fields, TASKIQ_FIELD)
    if value is None:
        return None
    msg = parse_json(value, containers_only=True)
    if not isinstance(msg, dict):
        return None
    task_id, task_name = msg.get("task_id"), msg.get("task_name")
    args, kwargs = msg.get("args"), msg.get("kwargs")
    if not (
        isinstance(task_id, str)
        and isinstance(task_name, str)
        and isinstance(args, list)
        and isinstance(kwargs, dict)
    ):
        return None
    raw_labels, kinds = msg.get("labels"), msg.get("labels_types")
    if not isinstance(raw_labels, dict):
        raw_labels = {}
    if not isinstance(kinds, dict):
        kinds = {}
    labels = {k: _label(v, kinds.get(k)) for k, v in raw_labels.items()}
    summary = f"{_call(task_name, args, kwargs, len(value))} id={task_id}"
    if labels:
        shown = " ".join(
            f"{k}={v if isinstance(v, str) else json_preview(v, 80, len(value))}"
            for k, v in labels.items()
        )
        summary += f" labels: {shown}"
    summary += other_fields(fields, TASKIQ_FIELD)
    data = {
        "task_id": task_id,
        "task_name": task_name,
        "args": args,
        "kwargs": kwargs,
        "labels": labels,
    }
    return Decoded("taskiq", data, summary)
