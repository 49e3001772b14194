"""Helpers of the exporter tier: the text format parsed back (prometheus-client's parser),
and samples looked up by name and labels."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


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


def find(series: list[Series], name: str, **labels: str) -> list[Series]:
    return [
        s for s in series if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
