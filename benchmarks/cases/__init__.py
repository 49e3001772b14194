"""Benchmark cases: every module here with a ``CASE`` attribute is one case."""

from __future__ import annotations

import importlib
import pkgutil

from benchmarks.harness import Case


def discover() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        case = getattr(module, "CASE", None)
        if isinstance(case, Case):
            cases[case.name] = case
    return cases
