"""pelctl/render/fleet.py: a snapshot's and an analysis' faces (no Spark, no server)."""

from __future__ import annotations

from pelctl.render.fleet import ANALYSIS, SNAPSHOT, AnalysisTables
from pelctl.render.protocol import Blank, Note, Pairs
from pelctl.render.table import Column, TableData

SNAP = {
    "snapshot_at": "2026-11-22T11:00:00Z",
    "path": "/data/snapshots",
    "server_count": 2,
    "stream_count": 1200,
    "group_count": 3,
    "row_counts": {"pel": 1_000_000, "consumers": 12, "dlq": 4},
    "duration_s": 12.345,
    "pel_rows_per_s": 81_004,
}


def test_snapshot() -> None:
    assert SNAPSHOT.document(SNAP) == SNAP
    (flat,) = SNAPSHOT.records(SNAP)
    assert "row_counts" not in flat
    assert (flat["pel_row_count"], flat["consumers_row_count"], flat["dlq_row_count"]) == (
        1_000_000,
        12,
        4,
    )
    assert list(SNAPSHOT.view(SNAP, 100)) == [
        Pairs(
            [
                ("snapshot", "2026-11-22T11:00:00Z"),
                ("written to", "/data/snapshots"),
                ("servers", "2"),
                ("streams", "1,200"),
                ("groups", "3"),
                ("pel rows", "1,000,000"),
                ("consumer rows", "12"),
                ("dlq rows", "4"),
                ("time", "12.35s (81,004 PEL rows/s)"),
            ],
            title="Snapshot written",
        )
    ]


def test_analysis() -> None:
    totals = TableData((Column("n", "N"),), [("1",)], title="Fleet")
    groups = TableData((Column("group", "GROUP"),), [("billing",)], title="Groups")
    records = [{"group": "billing"}]
    analysis = AnalysisTables({"totals": {}}, [(totals, [{"n": 1}]), (groups, records)])
    assert ANALYSIS.document(analysis) == {"totals": {}}
    assert ANALYSIS.records(analysis) == records  # CSV: the groups
    assert list(ANALYSIS.view(analysis, 100)) == [totals, Blank(), groups]
    timed = AnalysisTables(analysis.document, analysis.sections, (3.14, 20.0))
    assert list(ANALYSIS.view(timed, 100))[-1] == Note("Spark start-up 3.1s, analysis 20.0s")
