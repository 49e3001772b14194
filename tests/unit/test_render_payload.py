"""pelctl/render/payload.py: payload previews, the decoded JSON and the full view (no server)."""

from __future__ import annotations

from pelctl.core.decoders.common import Decoded
from pelctl.render import payload as pl
from tests.unit.render_text import render

JSON_FIELDS = ((b"data", b'{"order": 7}'),)


def test_previews() -> None:
    assert pl.preview(JSON_FIELDS) == 'json: data={"order": 7}'
    long = ((b"a", b"x" * 50), (b"b", b"y" * 50))
    assert pl.preview(long, width=30) == "a=" + "x" * 27 + "…"
    assert pl.preview(None) == ""
    assert pl.preview(JSON_FIELDS, ghost=True) == "(deleted from the stream)"
    assert pl.raw_preview(((b"k\x1b", b"\xff"),)) == "k\\x1b=\\xff"
    # already decoded: no decoder runs again; None means "no decoder knows it"
    assert pl.preview(JSON_FIELDS, decoded=None) == 'data={"order": 7}'


def test_decoded_json() -> None:
    assert pl.decoded_json(JSON_FIELDS) == {"format": "json", "fields": {"data": {"order": 7}}}
    assert pl.decoded_json(((b"a", b"\xff"),)) is None


def test_sections_and_plain_table() -> None:
    d = Decoded("taskiq", {"task_name": "t", "labels": {"a": 1}, "args": [1, 2]}, "t(1, 2)", ("n",))
    s = pl.sections(d)
    assert s == pl.Sections(
        "taskiq",
        pairs=[("task_name", "t")],
        parts=[("labels", [("a", "1")]), ("args", "[\n  1,\n  2\n]")],
        notes=["n"],
    )
    labels = s.parts[0][1]
    assert isinstance(labels, list)
    assert render("plain", pl.table_data("labels", labels)) == (
        "# labels\nNAME    VALUE\na       1\n"
    )
    fs = pl.sections(Decoded("faststream", {"body_type": "text", "body": "hi\x1b"}, "hi"))
    assert fs.pairs == [("body (text)", "hi\x1b")]  # data: escaped on the way out
