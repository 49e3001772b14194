"""Helpers of the exporter tier: the text format parsed back (prometheus-client's parser),
samples looked up by name and labels, and ``pelctl exporter`` in a process."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Series:
    name: str
    labels: dict[str, str]
    value: float


def parse(text: str) -> list[Series]:
    out = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.append(Series(sample.name, dict(sample.labels), sample.value))
    return out


def names(text: str) -> set[str]:
    return {s.name for s in parse(text)}


def value(series: list[Series], name: str, **labels: str) -> float:
    found = [
        s for s in series if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, f"{name} {labels}: {len(found)} series"
    return found[0].value


def value_or(series: list[Series], name: str, default: float = 0.0, **labels: str) -> float:
    """The value of a series that may not be there yet."""
    found = find(series, name, **labels)
    return found[0].value if len(found) == 1 else default


def find(series: list[Series], name: str, **labels: str) -> list[Series]:
    return [
        s for s in series if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]


class Exporter:
    """``pelctl exporter`` in a subprocess (JSON log lines collected by a thread), and a
    scrape of its endpoint."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.lines: list[dict] = []
        self.raw: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pelctl", "exporter", *args, "--log-format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.raw.append(line)
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def events(self, name: str) -> list[dict]:
        return [e for e in list(self.lines) if e.get("event") == name]

    def wait_for(self, pred: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
        return wait_for(
            pred,
            what,
            timeout,
            interval=0.05,
            alive=lambda: self.proc.poll() is None,
            describe=lambda: "log:\n" + "".join(self.raw[-40:]),
        )

    @property
    def address(self) -> tuple[str, int]:
        (start,) = self.wait_for(lambda: self.events("start"), "the exporter to listen")
        host, _, port = start["listen"].rpartition(":")
        return host, int(port)

    def scrape(self, path: str = "/metrics") -> tuple[int, str]:
        host, port = self.address
        conn = http.client.HTTPConnection(host, port, timeout=20)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read().decode()
        finally:
            conn.close()

    def series(self) -> list[Series]:
        status, body = self.scrape()
        assert status == 200, body
        return parse(body)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(10)
        from tests.schemas.checker import check_logs

        check_logs("".join(self.raw))  # every line matches docs/schemas/exporter-log.json


def exporter_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PELCTL_", "REDIS"))}
    env.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env
