"""Measure the memory of one call in a fresh interpreter (used by ``harness.memory_probe``).

    python -m benchmarks.memprobe [--rss] MODULE:FUNCTION ARG...

``MODULE:FUNCTION`` is called as ``prepare = FUNCTION(*ARGS)``, which sets up (imports,
connections) and returns the zero-argument callable to measure. Prints one JSON line:
``{"peak": bytes}`` (tracemalloc peak, default) or ``{"rss_growth": bytes, "rss_before": bytes,
"max_rss": bytes}`` (``--rss``: max resident set minus the resident set before the call).
"""

from __future__ import annotations

import importlib
import json
import resource
import sys


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> bool:
    """Reset the resident-set high-water mark (Linux: ``echo 5 > /proc/self/clear_refs``)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def main(argv: list[str]) -> int:
    rss_mode = False
    if argv and argv[0] == "--rss":
        rss_mode = True
        argv = argv[1:]
    target, *args = argv
    module_name, _, func_name = target.partition(":")
    prepare = getattr(importlib.import_module(module_name), func_name)
    call = prepare(*args)
    if rss_mode:
        reset = _reset_peak()
        before = _status("VmRSS")
        call()
        peak = (
            _status("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        )
        print(
            json.dumps({"rss_growth": max(0, peak - before), "rss_before": before, "max_rss": peak})
        )
        return 0
    import tracemalloc

    tracemalloc.start()
    call()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(json.dumps({"peak": peak}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
