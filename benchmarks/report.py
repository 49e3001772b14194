"""The table printer, the machine description and the JSON results file."""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.harness import CaseResult, Check, Row

RESULTS_DIR = Path(__file__).parent / "results"


def machine(server_version: str) -> dict[str, Any]:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            mem_gb = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    import hiredis
    import redis

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "redis_server": server_version,
        "redis_py": redis.__version__,
        "hiredis": getattr(hiredis, "__version__", "?"),
        "load_avg": _load(),
    }


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def fmt_s(s: float | None) -> str:
    return "-" if s is None else f"{s:.3f} s"


def table(case: str, rows: list[Row]) -> list[str]:
    """Markdown table of one case: every size, every contender."""
    head = (
        "| size | contender | median | min | vs bold row | peak mem (tracemalloc) | "
        "RSS growth | longest call | calls |"
    )
    lines = [f"### {case}", "", head, "|" + "---|" * 9]
    by_size: dict[tuple[int, str], list[Row]] = {}
    for row in rows:
        by_size.setdefault((row.size, row.group), []).append(row)
    for (size, measure), group in by_size.items():
        base = next((r for r in group if r.baseline), None)
        for r in group:
            ratio = "-"
            if base is not None and base.median_s and r.median_s:
                ratio = "1.00x" if r is base else f"{r.median_s / base.median_s:.2f}x"
            longest = "-" if r.longest_call_ms is None else f"{r.longest_call_ms:.2f} ms"
            name = f"**{r.name}**" if r.baseline else r.name
            name = f"{measure}: {name}" if measure else name
            note = f" ({r.note})" if r.note else ""
            shown = f"{size:,}" if size else "-"
            lines.append(
                f"| {shown} | {name}{note} | {fmt_s(r.median_s)} | {fmt_s(r.min_s)} | {ratio} "
                f"| {fmt_bytes(r.peak_mem)} | {fmt_bytes(r.rss_growth)} | {longest} "
                f"| {'-' if r.calls is None else f'{r.calls:,}'} |"
            )
    return lines


def checks(items: list[Check]) -> list[str]:
    lines = ["| target | measured | limit | |", "|---|---|---|---|"]
    for c in items:
        value = "-" if c.value is None else f"{c.value:.2f}{c.unit}"
        op = "≤" if c.lower_is_better else "≥"
        lines.append(
            f"| {c.name} | {value} | {op} {c.limit:g}{c.unit} | {'ok' if c.ok else 'MISSED'} |"
        )
    return lines


def render(results: dict[str, CaseResult], info: dict[str, Any]) -> str:
    out = [
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory_gb']} GB; "
        f"{info['os']}; Python {info['python']}; redis-server {info['redis_server']}; "
        f"redis-py {info['redis_py']}, hiredis {info['hiredis']}; "
        f"load average at start {info.get('load_avg')}, at end {info.get('load_avg_end')}",
        "",
    ]
    for name, result in results.items():
        out += table(name, result.rows)
        out.append("")
        if result.checks:
            out += checks(result.checks)
            out.append("")
        for note in result.notes:
            out.append(f"- {note}")
        if result.notes:
            out.append("")
    return "\n".join(out)


def save(
    results: dict[str, CaseResult], info: dict[str, Any], directory: Path = RESULTS_DIR
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    doc = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": info,
        "cases": {
            name: {
                "rows": [asdict(r) | {"median_s": r.median_s, "min_s": r.min_s} for r in res.rows],
                "checks": [asdict(c) | {"ok": c.ok} for c in res.checks],
                "notes": res.notes,
            }
            for name, res in results.items()
        },
    }
    path = directory / f"bench-{stamp}.json"
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    (directory / "latest.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    return path
