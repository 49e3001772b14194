"""pelctl's benchmark suite: pelctl against the alternatives, same data, one run (targets and
results: docs/benchmarks.md).

    python -m benchmarks                      # 100k and 1M entries, every case
    python -m benchmarks --sizes 100000 --repeat 3 --cases histogram

Layout, so new cases stay small:
- ``dataset.py``: the shared PEL builder (N pending entries over 8 consumers, 1% idle for an
  hour) and the throwaway redis-server (``BenchServer``) with its SLOWLOG helpers;
- ``harness.py``: timing (median of interleaved runs), memory measured in a subprocess
  (``memprobe.py``: tracemalloc peak and RSS growth), result rows and target checks;
- ``report.py``: the table printer, the machine description and the JSON written to
  ``benchmarks/results/`` (git-ignored);
- ``cases/``: one module per case exposing ``CASE = Case(name, run)``, where
  ``run(ctx) -> CaseResult``; a new module in ``cases/`` is picked up automatically.
"""

from pathlib import Path

# The repository's root: the helper processes (``python -m benchmarks.probe`` and the like)
# run from it, wherever the suite was started.
ROOT = Path(__file__).resolve().parent.parent
