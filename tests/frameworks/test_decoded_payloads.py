"""Entries published by the real FastStream (``RedisBroker.publish``) and taskiq-redis
(``RedisStreamBroker``, ``.kiq()``), read back decoded: ``pending --with-payload`` (text and
JSON), ``dlq move`` then ``dlq list|show``, and the TUI's entry view (``App.run_test()``).
What pelctl decodes is compared with what the libraries were given (the harness records it:
tests/frameworks/harness.py), a hostile body stays escaped, and a frame that is cut short
or garbled falls back to the raw fields without an error."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from pelctl.base.binary import escape, to_json_text
from tests.frameworks.harness import FASTSTREAM, TASKIQ, Harness
from tests.hostile.corpus import assert_safe

# ANSI colour, an OSC 8 hyperlink, an OSC 52 clipboard write, a C1 CSI and Rich markup.
HOSTILE = (
    "[link=http://evil.example/]x[/link] \x1b[31mred\x1b]8;;http://evil.example/\x1b\\click"
    "\x1b]8;;\x1b\\\x9b2J"
)
HOSTILE_HEADER = "\x1b]52;c;ZWNobyBvd25lZA==\x07[@click=app.quit]q[/]"


class Order(BaseModel):
    order: str
    amount: int
    note: str


def publish_faststream(h: Harness, messages: list[tuple[Any, dict[str, str], str]]) -> None:
    from faststream.redis import RedisBroker

    async def run() -> None:
        broker = RedisBroker(h.url)
        await broker.connect()
        try:
            for body, headers, cid in messages:
                await broker.publish(body, stream=h.stream, headers=headers, correlation_id=cid)
        finally:
            await broker.stop()

    asyncio.run(run())


def by_id(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {rec["id"]: rec for rec in records}


def test_faststream_published_messages_decoded(frameworks, cli) -> None:
    h = frameworks(FASTSTREAM)
    keys = h.publish(4, kind="mixed")  # JSON objects and binary bodies, x-trace headers
    publish_faststream(
        h, [(Order(order="o-9", amount=9, note="crème"), {"tenant": "acme"}, "pydantic-1")]
    )
    assert len(h.strand("gone")) == 5
    res = cli("pending", h.stream, h.group, "--with-payload", "-o", "json")
    assert res.exit_code == 0, res.stderr
    records = by_id(res.json)
    for key in keys:
        pub = h.published[key]
        rec = records[pub.entry_id]
        assert rec["fields"] == {k.decode(): to_json_text(v) for k, v in pub.fields.items()}
        d = rec["decoded"]
        assert d["format"] == "faststream"
        assert d["headers"] == pub.headers  # correlation_id, content-type, x-trace
        if d["body_type"] == "json":
            assert json.loads(pub.body) == d["body"]
        else:
            assert d["body_type"] == "binary" and d["body"] == escape(pub.body)
    (pydantic,) = [
        r for r in records.values() if r["id"] not in {h.published[k].entry_id for k in keys}
    ]
    assert pydantic["decoded"]["body"] == {"order": "o-9", "amount": 9, "note": "crème"}
    assert pydantic["decoded"]["headers"] == {
        "correlation_id": "pydantic-1",
        "content-type": "application/json",
        "tenant": "acme",
    }

    text = cli("pending", h.stream, h.group, "--with-payload", "-o", "plain").stdout
    first = h.published[keys[0]]
    line = next(ln for ln in text.splitlines() if ln.startswith(first.entry_id))
    # One line: the body as JSON (not escaped twice), then the headers, cut at 80 characters.
    assert line.endswith(
        f'faststream: {{"order": "{keys[0]}", "amount": 0, "note": "crème brûlée"}}…'
    )


def test_taskiq_kicked_tasks_decoded(frameworks, cli) -> None:
    h = frameworks(TASKIQ)
    keys = h.publish(3, kind="mixed")
    assert len(h.strand("gone")) == 3
    res = cli("pending", h.stream, h.group, "--with-payload", "-o", "json")
    assert res.exit_code == 0, res.stderr
    records = by_id(res.json)
    for key in keys:
        pub = h.published[key]
        d = records[pub.entry_id]["decoded"]
        assert d["format"] == "taskiq"
        assert (d["task_id"], d["task_name"]) == (key, "pelctl_tests.work")
        assert (d["args"], d["kwargs"]) == (pub.args, pub.kwargs)
        assert d["labels"]["trace"] == pub.headers["trace"]
    text = cli("pending", h.stream, h.group, "--with-payload", "-o", "plain").stdout
    pub = h.published[keys[0]]
    line = next(ln for ln in text.splitlines() if ln.startswith(pub.entry_id))
    # The argument as JSON ("crème", not "cr\\u00e8me"), cut at 80 characters.
    first = f'{{"order": "{keys[0]}", "amount": 0, "note": "crèm…'
    assert line.endswith(f"taskiq: pelctl_tests.work({first}")
    assert "\\u00e8" not in text


def test_dlq_move_list_and_show_decode(frameworks, cli) -> None:
    fs, tq = frameworks(FASTSTREAM), frameworks(TASKIQ)
    fs_keys, tq_keys = fs.publish(2, kind="json"), tq.publish(2, kind="json")
    for h in (fs, tq):
        h.strand("gone")
        res = cli("dlq", "move", h.stream, h.group, "--consumer", "gone", "--all", "--yes")
        assert res.exit_code == 0, res.stderr
    rows = cli("dlq", "list", "-o", "json").json
    by_original = {row["original_id"]: row for row in rows}
    for key in fs_keys:
        pub = fs.published[key]
        row = by_original[pub.entry_id]
        assert row["decoded"]["headers"] == pub.headers
        assert row["decoded"]["body"] == json.loads(pub.body)
        show = cli("dlq", "show", row["dlq"], row["id"], "-o", "plain")
        assert show.exit_code == 0, show.stderr
        assert "payload: faststream" in show.stdout
        assert f'  "order": "{key}",' in show.stdout  # the body, indented
        assert f"x-trace         trace-{key}" in show.stdout
    for key in tq_keys:
        pub = tq.published[key]
        row = by_original[pub.entry_id]
        assert row["decoded"]["task_id"] == key and row["decoded"]["args"] == pub.args
        doc = cli("dlq", "show", row["dlq"], row["id"], "-o", "json").json
        assert doc["decoded"] == row["decoded"]
        assert doc["field_pairs"] == [["data", pub.body.decode()]]  # the raw field as before


def test_hostile_body_and_headers_stay_escaped(frameworks, cli) -> None:
    h = frameworks(FASTSTREAM)
    publish_faststream(
        h,
        [
            ({"note": HOSTILE}, {"x-evil": HOSTILE_HEADER}, "c-json"),
            (HOSTILE, {"x-evil": HOSTILE_HEADER}, "c-text"),
        ],
    )
    h.strand("gone")
    for fmt in ("plain", "table", "json"):
        res = cli("pending", h.stream, h.group, "--with-payload", "-o", fmt)
        assert res.exit_code == 0, res.stderr
        assert_safe(res.stdout, f"pending -o {fmt}")
        if fmt == "json":
            decoded = [rec["decoded"] for rec in res.json]
            assert decoded[0]["body"] == {"note": HOSTILE}  # the exact strings in JSON
            assert decoded[1]["body"] == HOSTILE
            assert {d["headers"]["x-evil"] for d in decoded} == {HOSTILE_HEADER}
        else:
            assert "[link=http://evil.example/]x[/link]" in res.stdout  # shown, not run
            assert "\\x1b[31mred" in res.stdout or "\\u001b[31mred" in res.stdout
    moved = cli("dlq", "move", h.stream, h.group, "--consumer", "gone", "--all", "--yes")
    assert moved.exit_code == 0
    for row in cli("dlq", "list", "-o", "json").json:
        show = cli("dlq", "show", row["dlq"], row["id"], "-o", "plain")
        assert show.exit_code == 0
        assert_safe(show.stdout, "dlq show")
        assert "[@click=app.quit]q[/]" in show.stdout


def test_cut_or_garbled_frames_fall_back_to_the_raw_fields(frameworks, cli) -> None:
    h = frameworks(FASTSTREAM)
    (key,) = h.publish(1, kind="json")
    frame = h.published[key].fields[b"__data__"]
    broken = {
        "cut-in-the-headers": frame[:30],
        "cut-in-the-head": frame[:15],
        "offsets-beyond": frame[:14] + b"\xff\xff\xff\xff" + frame[18:],
    }
    ids = {name: h.r.xadd(h.stream, {"__data__": value}) for name, value in broken.items()}
    h.strand("gone")
    res = cli("pending", h.stream, h.group, "--with-payload", "-o", "json")
    assert res.exit_code == 0 and "Traceback" not in res.stderr
    records = by_id(res.json)
    assert records[h.published[key].entry_id]["decoded"]["format"] == "faststream"
    for name, entry_id in ids.items():
        rec = records[entry_id.decode()]
        assert rec["decoded"] is None, name
        assert rec["fields"] == {"__data__": to_json_text(broken[name])}
    text = cli("pending", h.stream, h.group, "--with-payload", "-o", "plain")
    assert text.exit_code == 0 and text.stderr == ""
    for entry_id in ids.values():
        line = next(ln for ln in text.stdout.splitlines() if ln.startswith(entry_id.decode()))
        assert "__data__=\\x89BIN\\r\\n\\x1a\\n" in line  # today's escaped view


# -- the dashboard -----------------------------------------------------------------------------


def _drawn(app) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


async def _until(pilot, condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        await pilot.pause()
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("framework", (FASTSTREAM, TASKIQ))
def test_tui_entry_view(frameworks, redis_server, framework: str) -> None:
    """``v`` on the stuck-entries table shows what the library was given."""
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.app import PelctlApp
    from pelctl.tui.screens.entry import EntryScreen
    from pelctl.tui.screens.group import GroupScreen
    from pelctl.tui.source import RedisSource

    h = frameworks(framework)
    (key,) = h.publish(1, kind="json")
    if framework == FASTSTREAM:
        publish_faststream(h, [(HOSTILE, {"x-evil": HOSTILE_HEADER}, "c-hostile")])
    h.strand("gone")
    pub = h.published[key]

    async def go() -> None:
        source = RedisSource.connect(ConnectionSettings(url=redis_server.url))
        app = PelctlApp(
            source,
            stream=h.stream.encode(),
            group=h.group.encode(),
            refresh_s=0,
            theme_name="pelctl-dark",
        )
        async with app.run_test(size=(150, 60)) as pilot:
            await _until(
                pilot,
                lambda: isinstance(app.screen, GroupScreen) and app.screen.data is not None,
                "the group view",
            )
            await _until(pilot, lambda: not app.screen.busy, "the group's refresh")
            screen = app.screen
            for row in range(screen.entries.row_count):
                screen.entries.move_cursor(row=row)
                entry_id = screen.entries.cursor_key
                await pilot.press("v")
                await _until(
                    pilot,
                    lambda: isinstance(app.screen, EntryScreen) and app.screen.detail is not None,
                    "entry view",
                )
                # The detail arrives before the screen is painted with it: wait for the paint.
                await _until(pilot, lambda: "Payload" in _drawn(app), "entry view drawn")
                text = _drawn(app)
                assert_safe(text, f"entry view {entry_id}")
                if entry_id == pub.entry_id and framework == FASTSTREAM:
                    assert "Payload (faststream)" in text
                    assert (
                        f"correlation_id  {key}" in text and f"x-trace         trace-{key}" in text
                    )
                    assert f'"order": "{key}"' in text and '"note": "crème brûlée"' in text
                elif entry_id == pub.entry_id:
                    assert "Payload (taskiq)" in text and "task_name  pelctl_tests.work" in text
                    assert f"task_id    {key}" in text and f"trace  trace-{key}" in text
                    assert '"note": "crème brûlée"' in text
                else:
                    assert "[link=http://evil.example/]x[/link]" in text
                await pilot.press("escape")
                await _until(pilot, lambda: app.screen is screen, "back")
        source.close()

    asyncio.run(go())
