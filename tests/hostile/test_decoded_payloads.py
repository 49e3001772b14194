"""Decoded payloads over the hostile corpus: every corpus value inside a FastStream frame
(headers, correlation id, a JSON body, a text body, a raw body), a taskiq task (name, args,
kwargs, labels) and a JSON field value, then read back through every surface that shows a
decoded payload: ``pending --with-payload`` and ``dlq list`` in every format, ``dlq show``,
the installed ``pelctl`` on a real terminal, and the TUI (the DLQ pane and the entry view).

Decoding must not open a way around the display rules (docs/security.md): a header or a body
is data like a field value, so ESC, C1, bidi and line separators never reach the output, and
``[link=...]`` shows as those characters. JSON carries the exact strings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import redis

from pelctl.base.binary import escape
from pelctl.demo import scenario as sc
from tests.hostile.checks import FORMATS, TEXT_FORMATS, check, shown
from tests.hostile.corpus import BIG, BY_KEY, SMALL, Hostile, assert_safe
from tests.hostile.test_terminal import on_terminal
from tests.hostile.test_tui import SIZE, assert_drawn_safe, loaded, run_async, until
from tests.integration.dlq_builders import add_dead
from tests.payload_builders import faststream_frame, taskiq_data

STREAM, GROUP, CONSUMER = b"hostile:payloads", b"g", b"c"
DLQ = STREAM + b":dlq"
KINDS = ("faststream-json", "faststream-text", "faststream-raw", "taskiq", "json")


@dataclass(frozen=True)
class Entry:
    hostile: Hostile
    kind: str
    id: bytes = b""
    dead_id: bytes = b""

    @property
    def text(self) -> str:
        """The corpus value where the formats need a string (headers, JSON, task names)."""
        return self.hostile.raw.decode("utf-8", "replace")


def fields_for(h: Hostile, kind: str) -> dict[bytes, bytes]:
    p = h.raw.decode("utf-8", "replace")
    if kind == "faststream-json":
        headers = {} if h.big else {"x-hostile": p, f"k{p}": p}  # a u16 length: no 64 KiB
        cid = "big" if h.big else p
        return {b"__data__": faststream_frame({"k": p, p: [p]}, headers, correlation_id=cid)}
    if kind == "faststream-text":
        return {b"__data__": faststream_frame(p, correlation_id="c")}
    if kind == "faststream-raw":
        return {b"__data__": faststream_frame(h.raw, correlation_id="c")}  # the bytes as they are
    if kind == "taskiq":
        return {b"data": taskiq_data(task_name=p, args=[p], kwargs={p: p}, labels={"l": p})}
    return {h.raw: json.dumps({p: p}).encode()}


@pytest.fixture(scope="module")
def payloads(hostile_server) -> dict[tuple[str, str], Entry]:
    client: redis.Redis = hostile_server.client()
    out: dict[tuple[str, str], Entry] = {}
    try:
        client.flushall()
        sc.create_group(client, STREAM, GROUP)
        for h in (*SMALL, BIG):
            for kind in KINDS:
                fields = fields_for(h, kind)
                entry_id = client.xadd(STREAM, fields)
                dead = add_dead(
                    client,
                    DLQ,
                    STREAM,
                    tuple(fields.items()),
                    group=GROUP,
                    original_id=entry_id,
                    owner=CONSUMER,
                    reason=b"hostile",
                )
                out[(h.key, kind)] = Entry(h, kind, entry_id, dead)
        sc.deliver(client, STREAM, GROUP, CONSUMER, len(out))
    finally:
        client.close()
    return out


def _records(r, fmt: str) -> list:
    return r.json if fmt == "json" else r.ndjson


def _check_decoded(entry: Entry, decoded: dict) -> None:
    """JSON output carries the exact strings the frameworks were given."""
    p, h = entry.text, entry.hostile
    if entry.kind == "faststream-json":
        assert decoded["format"] == "faststream" and decoded["body"] == {"k": p, p: [p]}
        if not h.big:
            assert (
                decoded["headers"]["x-hostile"] == p and decoded["headers"]["correlation_id"] == p
            )
    elif entry.kind == "faststream-text":
        assert decoded["body"] == p and decoded["body_type"] == "text"
    elif entry.kind == "faststream-raw":
        want = ("text", p) if p.encode() == h.raw else ("binary", escape(h.raw))
        assert (decoded["body_type"], decoded["body"]) == want
    elif entry.kind == "taskiq":
        assert decoded["format"] == "taskiq"
        assert (decoded["task_name"], decoded["args"], decoded["kwargs"]) == (p, [p], {p: p})
        assert decoded["labels"] == {"l": p}
    else:
        assert decoded == {
            "format": "json",
            "fields": {escape(h.raw) if not _utf8(h.raw) else p: {p: p}},
        }


def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("fmt", FORMATS)
def test_pending_with_payload(run, payloads, fmt: str) -> None:
    r = run(
        "pending",
        "--with-payload",
        "--all",
        "-o",
        fmt,
        "--",
        escape(STREAM),
        escape(GROUP),
        terminal=fmt == "table",
    )
    check(r, fmt, "pending --with-payload")
    if fmt in ("json", "ndjson"):
        by_id = {rec["id"].encode(): rec for rec in _records(r, fmt)}
        assert len(by_id) == len(payloads)
        for entry in payloads.values():
            _check_decoded(entry, by_id[entry.id]["decoded"])
    elif fmt in TEXT_FORMATS:
        text = shown(r, fmt)
        for kind in ("faststream: ", "taskiq: ", "json: "):
            assert kind in text
        # Markup inside a decoded body is shown as its characters, not run.
        assert '{"k": "[link=http://evil.example/]g[/link]"' in text
        assert "taskiq: [@click=app.quit]q[/](" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_dlq_list(run, payloads, fmt: str) -> None:
    r = run("dlq", "list", "--all", "-o", fmt, "--", escape(DLQ), terminal=fmt == "table")
    check(r, fmt, "dlq list")
    if fmt in ("json", "ndjson"):
        by_id = {rec["id"].encode(): rec for rec in _records(r, fmt)}
        for entry in payloads.values():
            _check_decoded(entry, by_id[entry.dead_id]["decoded"])


@pytest.mark.parametrize("fmt", ("table", "plain", "json"))
@pytest.mark.parametrize("kind", KINDS)
def test_dlq_show(run, payloads, kind: str, fmt: str) -> None:
    for h in (*SMALL, BIG):
        entry = payloads[(h.key, kind)]
        r = run(
            "dlq",
            "show",
            "-o",
            fmt,
            "--",
            escape(DLQ),
            entry.dead_id.decode(),
            terminal=fmt == "table",
        )
        check(r, fmt, f"dlq show {h.key} {kind}")
        if fmt == "json":
            _check_decoded(entry, r.json["decoded"])
        elif h.key == "markup-link" and kind == "faststream-json":
            assert '"k": "[link=http://evil.example/]g[/link]"' in shown(r, fmt)
        elif h.key == "newline" and kind == "faststream-text":
            # A line break inside a text body stays inside its line: no line of its own.
            assert "error: fake" not in shown(r, fmt).splitlines()[-3:]
            assert "n1\\nerror: fake\\r\\tx" in shown(r, fmt)


@pytest.mark.parametrize("key", ("osc52-st", "osc8-st", "c1-bytes", "csi"))
def test_on_a_real_terminal(hostile_server, payloads, key: str) -> None:
    """The installed pelctl on a pty: the bytes the terminal gets hold no control."""
    for args in (
        ("pending", "--with-payload", "--all", "--", escape(STREAM), escape(GROUP)),
        ("dlq", "show", "--", escape(DLQ), payloads[(key, "faststream-json")].dead_id.decode()),
        ("dlq", "show", "--", escape(DLQ), payloads[(key, "taskiq")].dead_id.decode()),
    ):
        code, output = on_terminal(hostile_server.url, *args)
        assert code == 0, output.decode("utf-8", "replace")
        assert b"Traceback" not in output
        assert_safe(output.replace(b"\r\n", b"\n"), " ".join(args[:2]), terminal=True)


# -- the dashboard -----------------------------------------------------------------------------


@pytest.fixture
def make_app(hostile_server) -> Iterator[Callable[..., object]]:
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.app import PelctlApp
    from pelctl.tui.source import RedisSource

    sources: list[RedisSource] = []

    def build(**kwargs: object) -> PelctlApp:
        source = RedisSource.connect(ConnectionSettings(url=hostile_server.url))
        sources.append(source)
        kwargs.setdefault("refresh_s", 0)
        kwargs.setdefault("top_n", 200)
        kwargs.setdefault("theme_name", "pelctl-dark")
        return PelctlApp(source, **kwargs)  # type: ignore[arg-type]

    yield build
    for s in sources:
        s.close()


# Opening a modal costs about a second here: each table views every kind of payload of a
# few corpus values (together they cover the terminal controls, C1, bidi, markup, a line
# break and the 64 KiB value; the CLI tests above take the whole corpus).
STUCK_KEYS = ("csi", "c1-bytes", "markup-link", "big")
DEAD_KEYS = ("osc8-st", "c1-chars", "bidi", "newline", "markup-link")


def test_entry_view_on_the_stuck_entries(payloads, make_app) -> None:
    """``v`` on rows of the stuck-entries table: the view draws the decoded headers, body,
    task and fields of hostile values without a control character; escape goes back."""
    from pelctl.tui.screens.entry import EntryScreen
    from pelctl.tui.screens.group import GroupScreen

    wanted = {payloads[(key, kind)].id.decode() for key in STUCK_KEYS for kind in KINDS}

    async def go() -> None:
        app = make_app(stream=STREAM, group=GROUP)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = await loaded(pilot, GroupScreen, "group")
            table = screen.entries
            seen: set[str] = set()
            for row in range(table.row_count):
                table.move_cursor(row=row)
                key = table.cursor_key
                if key not in wanted:
                    continue
                await pilot.press("v")
                await until(
                    pilot,
                    lambda: isinstance(app.screen, EntryScreen) and app.screen.detail is not None,
                    f"entry view {key}",
                )
                text = assert_drawn_safe(app, f"entry view of {key}")
                assert "Payload (" in text
                seen.add(key)
                await pilot.press("escape")
                await until(pilot, lambda: app.screen is screen, "back to the group")
            assert seen == wanted

    run_async(go())


def test_entry_view_on_the_dead_letters(payloads, make_app) -> None:
    from pelctl.tui.screens.dlq import DlqScreen
    from pelctl.tui.screens.entry import EntryScreen

    wanted = {payloads[(key, kind)].dead_id.decode() for key in DEAD_KEYS for kind in KINDS}
    link = escape(BY_KEY["markup-link"].raw)

    async def go() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            app.open_dlq(DLQ, source=STREAM)
            screen = await loaded(pilot, DlqScreen, "dlq")
            table = screen.table
            seen: set[str] = set()
            for row in range(table.row_count):
                table.move_cursor(row=row)
                key = table.cursor_key
                if key not in wanted:
                    continue
                await pilot.pause()
                assert_drawn_safe(app, f"dlq pane {key}")  # the pane's payload line
                await pilot.press("v")
                await until(
                    pilot,
                    lambda: isinstance(app.screen, EntryScreen) and app.screen.detail is not None,
                    f"entry view {key}",
                )
                text = assert_drawn_safe(app, f"dead-letter entry view {key}")
                if key == payloads[("markup-link", "faststream-json")].dead_id.decode():
                    assert f'"k": "{link}"' in text  # literal, not a hyperlink
                seen.add(key)
                await pilot.press("escape")
                await until(pilot, lambda: app.screen is screen, "back to the dlq")
            assert seen == wanted

    run_async(go())
