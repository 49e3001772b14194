"""docs/monitoring.md documents every metric the exporter exposes and nothing else: its
table against a real exporter run (``exported``), both ways, and against the declarations
in :data:`pelctl.exporter.metrics.METRICS` (type and labels too)."""

from __future__ import annotations

import re
from pathlib import Path

from pelctl.exporter.metrics import METRICS

DOC = Path(__file__).resolve().parents[2] / "docs" / "monitoring.md"
ROW = re.compile(r"^\| `(pelctl_[a-z_]+)` \| (\w+) \| ([a-z_, ]+) \|", re.MULTILINE)


def documented() -> dict[str, tuple[str, tuple[str, ...]]]:
    rows = ROW.findall(DOC.read_text())
    assert rows, "no metric table in docs/monitoring.md"
    table = {
        name: (kind, tuple(x.strip() for x in labels.split(","))) for name, kind, labels in rows
    }
    assert len(table) == len(rows), "a metric documented twice"
    return table


def test_documented_is_exported_and_exported_is_documented(exported: set[str]) -> None:
    doc = set(documented())
    assert sorted(exported - doc) == [], "exported but not documented"
    assert sorted(doc - exported) == [], "documented but not exported"


def test_documented_as_declared() -> None:
    declared = {m.name: (m.kind, m.labels) for m in METRICS}
    assert documented() == declared
