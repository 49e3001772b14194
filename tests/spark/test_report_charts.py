"""The HTML report's charts (pygal, no Spark needed): readable axes."""

from __future__ import annotations

import re

import pytest

from pelctl.spark import report

pytestmark = pytest.mark.spark  # pygal comes with the spark extra


def _axis_labels(svg: str, axis: str) -> list[str]:
    match = re.search(rf'<g class="axis {axis}[^"]*">(.*?)</g>\s*</g>', svg, re.S)
    assert match, f"no {axis} axis in the chart"
    return re.findall(r"<text[^>]*>([^<]*)</text>", match.group(1))


def test_idle_percentile_chart_value_axis_labels_do_not_run_into_each_other() -> None:
    # four groups with idle from 5 s to 20 min: pygal's automatic scale made 13 duration
    # labels ("0ms 1m40s 3m20s ... 20m00s") on a 520-pixel axis, printed over each other
    items = [
        ("{payments} / settle", 5_200, 725_000, 725_000),
        ("orders / billing", 5_200, 185_000, 185_000),
        ("legacy / import", 1_205_000, 1_205_000, 1_205_000),
        ("orders / shipping", 5_200, 5_200, 5_200),
    ]
    svg = str(report.percentile_chart(items, title="Idle time per group: p50 / p90 / p99"))
    values = _axis_labels(svg, "x")
    assert 2 <= len(values) <= 7, values
    assert values[0] == "0ms"
    names = _axis_labels(svg, "y")
    assert names == [name for name, *_ in reversed(items)]  # the first on top
