"""The Grafana dashboard (deploy/grafana/pelctl-dashboard.json): every query names only
metrics a real exporter run shows, and is PromQL Prometheus accepts (``promtool check
rules`` on the queries as recording rules, Grafana's variables filled in)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.support.tools import need_binary

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "pelctl-dashboard.json"
NAME = re.compile(r"\bpelctl_[a-z_]+\b")
# Grafana's variables, as a query reaches Prometheus.
VARIABLES = {"$__rate_interval": "5m", "$server": ".*", "$stream": ".*", "$group": ".*"}


def queries() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                found.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc["panels"])
    for var in doc["templating"]["list"]:
        if var["type"] == "query":
            match = re.fullmatch(r"label_values\((.+), *\w+\)", var["definition"])
            assert match, var["definition"]
            found.append(match.group(1))
    return found


def filled(expr: str) -> str:
    for name, value in VARIABLES.items():
        expr = expr.replace(name, value)
    return expr


def test_every_query_uses_exported_metrics(exported: set[str]) -> None:
    used: set[str] = set()
    for expr in queries():
        names = set(NAME.findall(expr))
        assert names, f"a query with no pelctl metric: {expr}"
        assert names <= exported, (expr, names - exported)
        used |= names
    assert len(queries()) >= 25
    # The panels that matter at 3 a.m. are there.
    assert {"pelctl_group_oldest_idle_seconds", "pelctl_group_pending", "pelctl_up"} <= used


def test_every_query_is_promql(tmp_path: Path) -> None:
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"dashboard:query_{i}", "expr": filled(expr)}
                    for i, expr in enumerate(queries())
                ],
            }
        ]
    }
    path = tmp_path / "queries.yml"
    path.write_text(yaml.safe_dump(rules))
    done = subprocess.run(
        [need_binary("promtool"), "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
