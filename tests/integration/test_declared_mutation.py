"""A mutation declared once works on every surface with no edit to any of them
(docs/architecture.md, "A mutation's path").

The test declares ``tag`` (a trivial planner and executor: each targeted pending entry's id
goes into the set ``<stream>:tags``; nothing else changes) and then, through the surfaces'
generic paths only: the CLI's (a command registered with ``mutation="tag"`` gets the safety
options; its dry run shows the plan; ``--yes`` applies it; read-only and a missing terminal
refuse it), the dashboard's (the modal shows the declaration's question, applying audits it;
read-only refuses it) and the audit log (one line per run, with the declared name)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis
import typer
from typer.testing import CliRunner

from pelctl.cli.mutate import run_mutation
from pelctl.cli.options import Runtime, pelctl_command
from pelctl.core import mutations
from pelctl.core.mutations.api import build_result
from pelctl.core.mutations.declaration import Mutation, Plan
from pelctl.core.mutations.model import Options, PlanItem, Targets
from pelctl.core.mutations.outcomes import APPLIED, ItemResult, RepairResult
from tests.tui.conftest import make_app, recorder  # noqa: F401 - fixtures

STREAM, GROUP = b"orders", b"billing"


@dataclass(frozen=True, slots=True)
class Tagged(ItemResult):
    @property
    def status(self) -> str:
        return APPLIED if self.outcome == "tagged" else super().status


def plan_tag(
    conn,
    mutation: Mutation,
    stream: bytes,
    group: bytes,
    targets: Targets,
    options: Options,
    *,
    detail: bool = False,
) -> Plan:
    """The targeted ids that are pending (the others are ``missing``)."""
    del detail
    targets.require_some()
    raw = conn.raw(stream)
    rows = raw.execute_command("XPENDING", stream, group, "-", "+", 10_000)
    pending = {bytes(row[0]): row for row in rows}
    items = tuple(
        PlanItem(i, bytes(pending[i][1]), int(pending[i][2]), int(pending[i][3]), "tag")
        for i in targets.ids
        if i in pending
    )
    missing = tuple(i for i in targets.ids if i not in pending)
    return Plan(
        mutation.name,
        stream,
        group,
        items,
        targets,
        options,
        missing,
        server=conn.settings.redacted_url,
        created_ms=int(time.time() * 1000),
    )


def apply_tag(conn, plan: Plan, *, progress=None, **_: object) -> RepairResult:
    raw = conn.raw(plan.stream)
    done = []
    for n, item in enumerate(plan.actionable, 1):
        raw.execute_command("SADD", plan.stream + b":tags", item.id)
        done.append(Tagged(item.id, "tagged"))
        if progress is not None:
            progress(n, len(plan.actionable))
    return build_result(plan, done)


@pytest.fixture(autouse=True)
def audit_lines_match_schema() -> Iterator[None]:
    """As in tests/conftest.py, every audit line is checked against its schema, with the
    test's own mutation standing in for a shipped one: docs/schemas/audit-line.json lists
    the shipped mutations by name (tests/unit/test_runner.py keeps it in step)."""
    from unittest import mock

    from pelctl.core import audit
    from tests.schemas.checker import errors

    problems: list[str] = []
    original = audit.append

    def append(record: dict, path=None):
        shown = {**record, "action": "ack"} if record.get("action") == "tag" else record
        found = errors("audit-line.json", shown)
        if found:
            problems.append(f"audit line does not match its schema: {found[:5]}")
        return original(record, path)

    with mock.patch.object(audit, "append", append):
        yield
    assert not problems, problems[0]


@pytest.fixture
def tag() -> Iterator[Mutation]:
    mutation = mutations.declare(
        Mutation(
            "tag",
            "tag",
            "add the entries' ids to <stream>:tags",
            plan_tag,
            apply_tag,
            past="tagged",
        )
    )
    try:
        yield mutation
    finally:
        del mutations.MUTATIONS["tag"]


@pytest.fixture
def pending_ids(r: redis.Redis) -> list[bytes]:
    from pelctl.demo.server import seed

    seed(r)
    rows = r.xpending_range(STREAM, GROUP, "-", "+", 3)
    assert len(rows) == 3
    return [row["message_id"] for row in rows]


def audit_lines() -> list[dict]:
    path = os.path.join(os.environ["XDG_STATE_HOME"], "pelctl", "audit.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh]


def tag_app() -> typer.Typer:
    """A CLI command for ``tag``: all it says is which mutation it runs and its targets."""
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """The test's CLI."""

    @pelctl_command(app, "tag", mutation="tag")
    def tag_cmd(rt: Runtime, stream: str, group: str, ids: list[str]) -> int:
        targets = Targets(ids=tuple(i.encode() for i in ids))
        return run_mutation(rt, "tag", stream.encode(), group.encode(), targets, Options())

    return app


def test_the_cli_runs_a_newly_declared_mutation(tag, pending_ids, r, redis_server) -> None:
    app, runner = tag_app(), CliRunner()
    env = {"PELCTL_URL": redis_server.url, "COLUMNS": "200"}
    ids = [i.decode() for i in pending_ids[:2]]

    def run(*args: str) -> tuple[int, str, str]:
        res = runner.invoke(app, ["tag", "orders", "billing", *ids, *args], env=env)
        if res.exception and not isinstance(res.exception, SystemExit):
            raise res.exception
        return res.exit_code, res.stdout, res.stderr

    # the safety options came with mutation="tag"; the dry run shows the plan
    code, out, err = run("--dry-run")
    assert code == 0, err
    assert "dry run, nothing changed" in out and all(i in out for i in ids)
    assert not r.exists("orders:tags") and audit_lines() == []
    # read-only and a missing terminal refuse it before connecting
    code, _, err = run("--read-only", "--yes")
    assert code == 2 and "error: tag refused: read-only mode is on" in err
    code, _, err = run()
    assert code == 2 and "tag changes data and needs confirmation" in err
    assert not r.exists("orders:tags") and audit_lines() == []
    # applied: the declaration's headline, one audit line with the declared name
    code, out, err = run("--yes")
    assert code == 0, err
    assert "tagged 2 entries of orders/billing" in out
    assert r.smembers("orders:tags") == set(pending_ids[:2])
    (line,) = audit_lines()
    assert line["action"] == "tag" and line["surface"] == "cli"
    assert line["applied"] == 2 and line["ids"] == ids
    assert line["outcomes"] == {"tagged": 2}


def test_the_dashboard_runs_a_newly_declared_mutation(
    tag,
    pending_ids,
    r,
    make_app,  # noqa: F811 - the dashboard tests' fixtures
    recorder,  # noqa: F811
) -> None:
    from pelctl.tui.actions import ActionRequest
    from pelctl.tui.messages import ActionApplied, ActionPlanned, ActionRefused
    from pelctl.tui.screens.confirm import ConfirmScreen
    from tests.tui.conftest import settle
    from tests.tui.test_actions import open_group

    request = ActionRequest("tag", STREAM, GROUP, ids=(pending_ids[0],))

    async def scenario() -> None:
        app = make_app(stream=STREAM, group=GROUP)
        async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
            screen = await open_group(app, pilot, recorder)
            screen.run_operator_action(request)
            planned = await recorder.wait_for(ActionPlanned, timeout=15)
            await settle(pilot, ConfirmScreen)
            modal = app.screen
            assert isinstance(modal, ConfirmScreen)
            # the declaration's question, its summary, the plan's row
            assert modal.plan.title.startswith("tag 1 entry of orders/billing held by ")
            assert ("Action", "Tag: add the entries' ids to <stream>:tags") in modal.plan.summary
            assert planned.plan.total == 1 and len(modal.plan.rows) == 1
            assert not r.exists("orders:tags")
            await pilot.press("y")
            applied = await recorder.wait_for(ActionApplied, timeout=15)
            assert applied.outcome.ok and applied.outcome.applied == 1
            assert applied.outcome.message.startswith("tagged 1 entry of orders/billing")

        # read-only: refused by the screen and by the data source on its own
        app = make_app(read_only=True, stream=STREAM, group=GROUP)
        async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
            screen = await open_group(app, pilot, recorder)
            screen.run_operator_action(request)
            refused = await recorder.wait_for(ActionRefused, where=lambda m: m.action == "tag")
            assert "read-only" in refused.reason
            from pelctl.base.errors import ReadOnlyRefused

            with pytest.raises(ReadOnlyRefused, match="tag refused: read-only mode is on"):
                app.source.plan(request)

    asyncio.run(scenario())
    assert r.smembers("orders:tags") == {pending_ids[0]}
    (line,) = audit_lines()
    assert line["action"] == "tag" and line["surface"] == "tui"
    assert line["ids"] == [pending_ids[0].decode()] and line["outcomes"] == {"tagged": 1}
