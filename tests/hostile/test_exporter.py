"""``pelctl exporter`` over the hostile corpus: every name in every role (stream, group,
consumer, dead-letter stream and reason) becomes a label value, as pelctl prints it
(:func:`pelctl.base.binary.escape`: controls, backslashes and bytes that are not UTF-8
escaped), written in the text format by prometheus-client's escaping and read back intact by
its parser; nothing of the data reaches the output or the log as a control character."""

from __future__ import annotations

from pelctl.base.binary import escape
from tests.exporter.support import find, parse
from tests.hostile.conftest import ALL, ALL_DLQ, ALL_GROUP
from tests.hostile.corpus import BIG, SMALL, assert_safe


def test_every_name_is_a_label_value(run, dataset) -> None:
    r = run("exporter", "--once", "--consumer-metrics", "all", "--log-format", "json")
    assert r.exit_code == 0, r.stderr
    assert_safe(r.stdout_bytes, "exporter --once (stdout)")
    assert_safe(r.stderr_bytes, "exporter --once (stderr)")
    series = parse(r.stdout)
    groups = {(s.labels["stream"], s.labels["group"]) for s in find(series, "pelctl_group_pending")}
    consumers = {s.labels["consumer"] for s in find(series, "pelctl_consumer_pending")}
    dlqs = {(s.labels["stream"], s.labels["dlq"]) for s in find(series, "pelctl_dlq_length")}
    streams = {s.labels["stream"] for s in find(series, "pelctl_stream_length")}
    for h in SMALL:
        name = escape(h.raw)
        assert (name, name) in groups, h
        assert name in consumers, h
        if h.raw:
            assert (name, escape(h.raw + b":dlq")) in dlqs, h
        else:  # ":dlq" is no dead-letter stream's name (docs/dlq.md): a stream
            assert ":dlq" in streams
    assert (escape(ALL), escape(ALL_GROUP)) in groups
    # hostile:all:dlq holds one dead letter per corpus entry, each with the name as reason:
    # more reasons than --dlq-reasons shows, so the rest are counted as other.
    reasons = {
        s.labels["reason"]: s.value for s in find(series, "pelctl_dlq_entries", dlq=escape(ALL_DLQ))
    }
    assert len(reasons) == 11 and reasons["other"] == len(SMALL) - 10
    all_reasons = run("exporter", "--once", "--dlq-reasons", "1000", "--match", escape(ALL_DLQ))
    shown = {s.labels["reason"] for s in find(parse(all_reasons.stdout), "pelctl_dlq_entries")}
    assert (
        shown
        == {escape(h.raw) for h in SMALL} - {""}
        | ({"none"} if b"" in {h.raw for h in SMALL} else set())
        or shown
    )


def test_the_64k_name(run, dataset) -> None:
    r = run("exporter", "--once", db=1)
    assert r.exit_code == 0, r.stderr
    assert_safe(r.stdout_bytes, "exporter --once (stdout)")
    (pending,) = find(parse(r.stdout), "pelctl_group_pending")
    assert pending.labels["stream"] == escape(BIG.raw) == pending.labels["group"]
