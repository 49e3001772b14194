"""A real Prometheus (Debian's ``prometheus`` package) scrapes ``pelctl exporter`` over the
demo's incident with the repository's alert rules loaded (a copy with short ``for:`` and a
one-second evaluation interval, so it is quick): through Prometheus' HTTP API, the target is
up, every rule is healthy, and the stuck-entries alert is pending or firing for the group
whose consumer crashed an hour ago."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from pelctl.demo.server import free_port
from tests.conftest import RedisServer
from tests.exporter.conftest import wait_until
from tests.support.tools import need_binary

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "pelctl-rules.yml"


class Prometheus:
    def __init__(self, target: str, rules: Path, workdir: Path) -> None:
        exe = need_binary("prometheus")
        self.port = free_port()
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": "pelctl", "static_configs": [{"targets": [target]}]}],
        }
        path = workdir / "prometheus.yml"
        path.write_text(yaml.safe_dump(config))
        self.log = open(workdir / "prometheus.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                exe,
                f"--config.file={path}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.workdir = workdir

    def api(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}{query}"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(
                "prometheus exited:\n" + (self.workdir / "prometheus.log").read_text()[-3000:]
            )
        try:
            self.api("status/buildinfo")
        except OSError:
            return False
        return True

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="pelctl-prometheus-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def quick_rules(workdir: Path) -> Path:
    """The repository's rules with every ``for:`` at 2 s."""
    doc = yaml.safe_load(RULES.read_text())
    for group in doc["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "2s"
    path = workdir / "pelctl-rules.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_prometheus_scrapes_the_exporter_and_the_stuck_alert_fires(
    incident: redis.Redis, redis_server: RedisServer, spawn, workdir: Path
) -> None:
    exporter = spawn("--url", redis_server.url, "--interval", "1s")
    host, port = exporter.address
    prom = Prometheus(f"{host}:{port}", quick_rules(workdir), workdir)
    try:
        wait_until(prom.ready, "prometheus to start", timeout=60)

        def target_up() -> Any:
            targets = prom.api("targets")["activeTargets"]
            return [t for t in targets if t["health"] == "up"]

        (target,) = wait_until(target_up, "the exporter's target to be up", timeout=90)  # type: ignore[misc]
        assert target["labels"]["job"] == "pelctl"

        def rules_evaluated() -> Any:
            rules = [r for g in prom.api("rules")["groups"] for r in g["rules"]]
            done = [r for r in rules if r.get("lastEvaluation", "").startswith("20")]
            return (
                rules if rules and all(r["health"] != "unknown" for r in rules) and done else None
            )

        rules = wait_until(rules_evaluated, "every rule evaluated", timeout=90)
        assert len(rules) == 8  # type: ignore[arg-type]
        assert {r["health"] for r in rules} == {"ok"}, [  # type: ignore[union-attr]
            (r["name"], r.get("lastError"))
            for r in rules
            if r["health"] != "ok"  # type: ignore[union-attr]
        ]

        def stuck() -> Any:
            alerts = prom.api("alerts")["alerts"]
            return [
                a
                for a in alerts
                if a["labels"]["alertname"] == "PelctlStuckEntries"
                and a["labels"].get("group") == "billing"
                and a["state"] in ("pending", "firing")
            ]

        (alert,) = wait_until(stuck, "PelctlStuckEntries for orders/billing", timeout=90)  # type: ignore[misc]
        assert alert["labels"]["stream"] == "orders"
        assert alert["labels"]["server"] == redis_server.url
        assert float(alert["value"]) > 3_600  # billing-2 crashed an hour ago
        firing = wait_until(
            lambda: [a for a in stuck() if a["state"] == "firing"], "the alert to fire", timeout=90
        )
        # What an operator sees, for the record (pytest -s shows it).
        result = prom.api("query", query="pelctl_group_oldest_idle_seconds")["result"]
        print(
            f"\nprometheus: target {target['scrapeUrl']} {target['health']}; "
            f"{len(rules)} rules, health {sorted({r['health'] for r in rules})}; "  # type: ignore[union-attr]
            f"PelctlStuckEntries {firing[0]['state']} for "  # type: ignore[index]
            f"{alert['labels']['stream']}/{alert['labels']['group']} "
            f"(oldest idle {float(alert['value']):.0f} s); "
            f"{len(result)} series of pelctl_group_oldest_idle_seconds"
        )
    finally:
        prom.stop()
