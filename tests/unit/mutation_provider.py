"""A provider module for tests/unit/test_mutations.py: importing it declares ``test-record``,
a mutation whose planner and executor record what the dispatcher hands them (no server)."""

from __future__ import annotations

from typing import Any

from pelctl.core import mutations as m

calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []


def _planner(*args: Any, **kwargs: Any) -> m.Plan:
    calls.append(("plan", args, kwargs))
    return m.Plan("test-record", args[2], args[3], ())


def _executor(*args: Any, **kwargs: Any) -> m.RepairResult:
    calls.append(("apply", args, kwargs))
    return m.build_result(args[1], ())


RECORD = m.declare(
    m.Mutation(
        "test-record",
        "record",
        "records its calls",
        _planner,
        _executor,
        needs=("reason", "to"),
        past="recorded",
    )
)
