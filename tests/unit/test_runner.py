"""The one mutation runner (pelctl/core/runner.py): its refusals and exit codes, the audit log
written from one place, and the CLI's mutating commands derived from the declarations."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from pelctl.base.errors import NotAudited, OperationFailed, ReadOnlyRefused, UsageError
from pelctl.core import mutations, runner
from pelctl.core.mutations.declaration import PROVIDERS, Mutation
from pelctl.core.mutations.outcomes import ItemResult, RepairResult

PACKAGE = Path(__file__).resolve().parents[2] / "pelctl"


def test_the_audit_log_is_written_from_one_place() -> None:
    """``audit.append(`` / ``audit.record(`` appear in the runner alone (and audit.py)."""
    call = re.compile(r"\baudit\.(append|record)\(")
    writers = sorted(
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if call.search(p.read_text())
    )
    assert writers == ["core/runner.py"]


def test_every_mutating_command_runs_a_declared_mutation() -> None:
    """A command gets the safety options from the mutation it names (``mutation=...``),
    every name is declared, and every declaration has a command."""
    import typer.main

    from pelctl.cli.app import app
    from pelctl.cli.options import FROM_PLAN_FILE, SAFETY_NAMES, command_mutation

    named: dict[str, str] = {}

    def walk(cmd, path: tuple[str, ...]) -> None:
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, (*path, name))
        mutation = command_mutation(cmd.callback)
        params = {p.name for p in cmd.params}
        if mutation is not None:
            named[" ".join(path)] = mutation
            assert set(SAFETY_NAMES) <= params, path

    walk(typer.main.get_command(app), ())
    assert named["apply"] == FROM_PLAN_FILE
    declared = {n for n in named.values() if n != FROM_PLAN_FILE}
    for name in declared:
        assert mutations.get(name).dangerous
    assert declared == set(mutations.MUTATIONS)
    assert named["dlq replay"] == "dlq-replay" and named["ghosts"] == "ghosts-fix"


def _mutation(dangerous: bool) -> Mutation:
    return Mutation(
        "probe", "probe", "a probe", lambda *a, **k: None, lambda *a, **k: None, dangerous=dangerous
    )  # type: ignore[arg-type]


def test_refusals_in_order(tmp_path, monkeypatch) -> None:
    asked: list[str] = []

    def ready(m: Mutation) -> None:
        asked.append(m.name)
        raise UsageError("no terminal")

    with pytest.raises(ReadOnlyRefused, match="^probe refused: read-only mode is on$"):
        runner.refuse(_mutation(True), read_only=True, ready=ready)
    assert asked == []  # read-only first, before the surface is asked
    with pytest.raises(UsageError, match="no terminal"):
        runner.refuse(_mutation(True), read_only=False, ready=ready)
    # not dangerous: nothing to refuse, not even an unwritable audit log
    monkeypatch.setenv("PELCTL_AUDIT_LOG", str(tmp_path))  # a directory
    runner.refuse(_mutation(False), read_only=True, ready=ready)
    with pytest.raises(OperationFailed, match="cannot write the audit log"):
        runner.refuse(_mutation(True), read_only=False)


def _result(*, failed: bool = False, interrupted: bool = False) -> RepairResult:
    fails = (ItemResult(b"1-0", "fail"),) if failed else ()
    return RepairResult("ack", b"s", b"g", False, 1, 0, 0, fails, interrupted=interrupted)


def test_outcome_exit_codes() -> None:
    problem = NotAudited("ack WAS applied", applied=1)
    assert runner.Outcome((_result(),)).exit_code == 0
    assert runner.Outcome((_result(), _result(failed=True))).exit_code == 5
    assert runner.Outcome((_result(failed=True), _result(interrupted=True))).exit_code == 130
    assert runner.Outcome((_result(interrupted=True),), not_audited=problem).exit_code == 6
    assert runner.Outcome(aborted=True).exit_code == 1


def test_the_audit_schema_names_every_declared_mutation() -> None:
    """docs/schemas/audit-line.json lists the actions an audit line may hold: every declared
    mutation, and the reclaim loop's passes."""
    import json

    schema = json.loads((PACKAGE.parent / "docs/schemas/audit-line.json").read_text())
    actions = schema["$defs"]["who"]["properties"]["action"]["enum"]
    for module in PROVIDERS:  # a lookup loads only its own module
        importlib.import_module(module)
    assert set(actions) == set(mutations.MUTATIONS) | {"reclaim"}
