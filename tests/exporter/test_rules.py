"""The alert rules in deploy/prometheus/ (docs/monitoring.md, "Alert rules"): valid for
Prometheus (``promtool check rules``), each alert firing when it should and not before
(``promtool test rules`` on deploy/prometheus/pelctl-rules.test.yml), and every metric they
name is one the exporter exposes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from pelctl.exporter.metrics import METRICS
from tests.support.tools import need_binary

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
RULES = DEPLOY / "pelctl-rules.yml"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    exe = need_binary("promtool")
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=120, cwd=DEPLOY, check=False
    )


def test_promtool_checks_the_rules() -> None:
    done = promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 8 rules found" in done.stdout


def test_promtool_unit_tests_pass() -> None:
    done = promtool("test", "rules", "pelctl-rules.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_alert_is_unit_tested_and_names_exported_metrics() -> None:
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    tests = yaml.safe_load((DEPLOY / "pelctl-rules.test.yml").read_text())["tests"]
    tested = {t["alertname"] for case in tests for t in case["alert_rule_test"] if t["exp_alerts"]}
    assert tested == {r["alert"] for r in rules}
    exported = {m.name for m in METRICS}
    for rule in rules:
        used = set(re.findall(r"\bpelctl_[a-z_]+\b", rule["expr"]))
        assert used <= exported, (rule["alert"], used - exported)
