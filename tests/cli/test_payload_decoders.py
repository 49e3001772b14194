"""Decoded payloads in ``pending --with-payload`` and ``dlq list|show`` (text, JSON, CSV), and
decoders added through the ``pelctl.decoders`` entry-point group: a real distribution's
metadata (a ``.dist-info`` directory with ``entry_points.txt``) on sys.path, discovered by
importlib.metadata, loaded only when a payload is shown.

Entries are written with the frameworks' own encoders (tests/payload_builders.py); the
entries the real brokers publish are read back in tests/frameworks/test_decoded_payloads.py.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from pelctl.base.binary import to_json_text
from pelctl.core import decoders
from pelctl.core.decoders import registry
from pelctl.demo import scenario as sc
from tests.payload_builders import faststream_frame, taskiq_data

FS_BODY = {"order": 7, "note": "crème"}


@pytest.fixture
def jobs(r: redis.Redis) -> dict[str, bytes]:
    """Stream ``jobs``, group ``g``: one entry of each kind, all pending on consumer ``c``."""
    kinds = {
        "faststream": {b"__data__": faststream_frame(FS_BODY, {"x-trace": "t-1"})},
        "faststream-text": {b"__data__": faststream_frame("hello\\world", correlation_id="c-2")},
        "taskiq": {b"data": taskiq_data()},
        "json": {b"event": b'{"type": "paid", "ids": [1, 2]}', b"n": b"1"},
        "plain": {b"order_id": b"ord-1", b"amount": b"5.00"},
        "ghost": {b"__data__": faststream_frame({"gone": True})},
    }
    ids = {k: r.xadd("jobs", fields) for k, fields in kinds.items()}
    sc.create_group(r, b"jobs", b"g")
    sc.deliver(r, b"jobs", b"g", b"c", len(kinds))
    r.xdel("jobs", ids["ghost"])
    return ids


def test_pending_json_adds_decoded_next_to_the_exact_fields(cli, r, jobs) -> None:
    res = cli("pending", "jobs", "g", "--with-payload", "-o", "json")
    assert res.exit_code == 0, res.stderr
    by_id = {rec["id"].encode(): rec for rec in res.json}
    for kind, entry_id in jobs.items():
        rec = by_id[entry_id]
        raw = r.xrange("jobs", entry_id, entry_id)
        want = {to_json_text(k): to_json_text(v) for k, v in raw[0][1].items()} if raw else None
        assert rec["fields"] == want, kind  # the raw fields exactly as before
        assert list(rec)[-1] == "decoded"  # added at the end: CSV columns keep their places
    decoded = {kind: by_id[jobs[kind]]["decoded"] for kind in jobs}
    assert decoded["faststream"] == {
        "format": "faststream",
        "headers": {
            "correlation_id": "c-1",
            "content-type": "application/json",
            "x-trace": "t-1",
        },
        "body": FS_BODY,
        "body_type": "json",
    }
    assert decoded["faststream-text"]["body"] == "hello\\world"
    assert decoded["taskiq"] == {
        "format": "taskiq",
        "task_id": "t-1",
        "task_name": "billing.charge",
        "args": [7, {"order": "o-1", "note": "crème"}],
        "kwargs": {"hold": False},
        "labels": {"trace": "x", "attempt": 2, "urgent": True},
    }
    event = {"type": "paid", "ids": [1, 2]}
    assert decoded["json"] == {"format": "json", "fields": {"event": event, "n": "1"}}
    assert decoded["plain"] is None and decoded["ghost"] is None
    csv = cli("pending", "jobs", "g", "--with-payload", "-o", "csv").stdout.splitlines()
    assert csv[0] == "id,consumer,idle_ms,deliveries,fields,ghost,decoded"


def test_pending_text_shows_one_readable_line_per_entry(cli, jobs) -> None:
    res = cli("pending", "jobs", "g", "--with-payload", "-o", "plain")
    assert res.exit_code == 0, res.stderr
    line = {
        kind: next(ln for ln in res.stdout.splitlines() if ln.startswith(entry_id.decode()))
        for kind, entry_id in jobs.items()
    }
    # The cell holds 80 characters: the summary is cut with "…" (JSON shows it all).
    assert line["faststream"].endswith(
        'faststream: {"order": 7, "note": "crème"} headers: correlation_id=c-1 x-trace=t…'
    )
    assert line["faststream-text"].endswith("faststream: hello\\world headers: correlation_id=c-2")
    # taskiq's JSON is read, not shown escaped a second time (no "cr\\u00e8me", no \\").
    assert (
        'taskiq: billing.charge(7, {"order": "o-1", "note": "crème"}, hold=false) id=t-1'
        in (line["taskiq"])
    )
    assert "\\\\" not in line["taskiq"] and '\\"' not in line["taskiq"]
    assert line["json"].endswith('json: event={"type": "paid", "ids": [1, 2]} n=1')
    assert line["plain"].endswith("order_id=ord-1 amount=5.00")  # no decoder: as before
    assert line["ghost"].endswith("(deleted from the stream)")


def test_dlq_list_and_show_decode_the_original_fields(cli, r, jobs) -> None:
    moved = cli("dlq", "move", "jobs", "g", "--all", "--yes")
    assert moved.exit_code == 0, moved.stderr
    rows = cli("dlq", "list", "jobs:dlq", "-o", "json").json
    by_original = {row["original_id"].encode(): row for row in rows}
    dead = by_original[jobs["faststream"]]
    assert dead["decoded"]["body"] == FS_BODY and dead["decoded"]["format"] == "faststream"
    assert by_original[jobs["taskiq"]]["decoded"]["task_name"] == "billing.charge"
    assert by_original[jobs["plain"]]["decoded"] is None
    text = cli("dlq", "list", "jobs:dlq", "-o", "plain").stdout
    assert 'faststream: {"order": 7, "note": "crème"} headers: correlat…' in text  # 60 wide

    show = cli("dlq", "show", "jobs:dlq", dead["id"], "-o", "plain")
    assert show.exit_code == 0, show.stderr
    out = show.stdout
    assert "payload: faststream" in out
    headers = out.index("# headers")
    body = out.index("body (json):\n{\n")
    fields = out.index("# fields")
    assert headers < body < fields  # decoded first, then the raw fields
    assert "x-trace         t-1" in out[headers:body]
    assert '  "order": 7,\n  "note": "crème"\n}' in out[body:fields]
    assert "__data__  \\x89BIN\\r\\n\\x1a\\n" in out[fields:]  # the raw frame, escaped
    doc = cli("dlq", "show", "jobs:dlq", dead["id"], "-o", "json").json
    assert doc["decoded"] == dead["decoded"]
    frame = r.xrange("jobs:dlq", dead["id"], dead["id"])[0][1][b"__data__"]
    assert doc["field_pairs"][0] == ["__data__", to_json_text(frame)]  # raw bytes, as before

    task = by_original[jobs["taskiq"]]["id"]
    out = cli("dlq", "show", "jobs:dlq", task, "-o", "plain").stdout
    assert "payload:   taskiq\ntask_id:   t-1\ntask_name: billing.charge\n" in out
    assert "# labels" in out and "attempt  2" in out and "# kwargs" in out
    assert 'args:\n[\n  7,\n  {\n    "order": "o-1",\n    "note": "crème"\n  }\n]' in out


# -- decoders from entry points -----------------------------------------------------------------

PLUGIN = '''
from pelctl.core.decoders import Decoded


def decode_tlv(fields):
    """Claims entries with a field named "tlv" (even when the value is JSON: entry-point
    decoders come before the built-in ones)."""
    for name, value in fields:
        if name == b"tlv":
            items = [part for part in value.split(b";") if part]
            return Decoded(data={"items": items, "count": len(items)},
                           summary=f"{len(items)} items")
    return None


class Broken:
    def decode(self, fields):
        raise ValueError("kaput")
'''

ENTRY_POINTS = """
[pelctl.decoders]
tlv = pelctl_test_decoders:decode_tlv
zz-broken = pelctl_test_decoders:Broken
zz-missing = pelctl_test_no_such_module:decode
"""


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution ``pelctl-test-decoders`` installed the way pip leaves it: its module and
    its ``.dist-info`` (METADATA, entry_points.txt) in a directory on sys.path."""
    site = tmp_path / "site"
    dist = site / "pelctl_test_decoders-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pelctl-test-decoders\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS).lstrip())
    (site / "pelctl_test_decoders.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(site))
    decoders.reset()
    sys.modules.pop("pelctl_test_decoders", None)
    yield site
    decoders.reset()
    sys.modules.pop("pelctl_test_decoders", None)


@pytest.fixture
def tlv(r: redis.Redis, jobs: dict[str, bytes]) -> bytes:
    entry_id = r.xadd("jobs", {"tlv": b'{"json": "too"}'})
    sc.deliver(r, b"jobs", b"g", b"c", 1)
    return entry_id


def test_entry_point_decoders_are_found_and_come_first(cli, plugin, jobs, tlv) -> None:
    from importlib.metadata import entry_points

    assert {ep.name for ep in entry_points(group="pelctl.decoders")} == {
        "tlv",
        "zz-broken",
        "zz-missing",
    }
    res = cli("pending", "jobs", "g", "--with-payload", "-o", "json")
    assert res.exit_code == 0, res.stderr
    by_id = {rec["id"].encode(): rec for rec in res.json}
    assert by_id[tlv]["decoded"] == {"format": "tlv", "items": ['{"json": "too"}'], "count": 1}
    # The broken decoder raised on every entry: skipped, the built-ins decoded the rest.
    assert by_id[jobs["faststream"]]["decoded"]["format"] == "faststream"
    assert by_id[jobs["plain"]]["decoded"] is None
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: payload decoder zz-broken: raised ValueError: kaput",
        "warning: payload decoder zz-missing: cannot load pelctl_test_no_such_module:decode: "
        "ModuleNotFoundError: No module named 'pelctl_test_no_such_module'",
    ]
    text = cli("pending", "jobs", "g", "--with-payload", "-o", "plain").stdout
    assert f"{tlv.decode()}  c" in text and "tlv: 1 items" in text


def test_entry_points_load_only_when_a_payload_is_shown(cli, plugin, jobs) -> None:
    assert cli("pending", "jobs", "g", "-o", "json").exit_code == 0
    assert cli("dlq", "move", "jobs", "g", "--all", "--yes").exit_code == 0
    assert cli("dlq", "stats", "jobs:dlq").exit_code == 0
    assert "pelctl_test_decoders" not in sys.modules
    assert registry._plugins is None  # the installed distributions were never scanned
    res = cli("dlq", "list", "jobs:dlq", "-o", "json")
    assert res.exit_code == 0 and "pelctl_test_decoders" in sys.modules
    assert "zz-missing" in res.stderr  # the listing still warns, once
