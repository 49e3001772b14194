"""``python -m benchmarks.bench_spark``: only the Spark case of the suite.

``pelctl snapshot`` of a 1,000,000-entry PEL in rows per second against the raw scan floor,
then ``pelctl analyze`` over it on ``local[2]`` (and ``--from-redis`` once), with Spark's
start-up time reported apart (see :mod:`benchmarks.cases.spark`). Same options as
``python -m benchmarks``; the defaults here are ``--sizes 1000000 --repeat 3``::

    python -m benchmarks.bench_spark
    python -m benchmarks.bench_spark --sizes 100000 --repeat 1 --no-save
"""

from __future__ import annotations

import sys

from benchmarks.__main__ import main as suite


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not any(a == "--sizes" or a.startswith("--sizes=") for a in args):
        args += ["--sizes", "1000000"]
    if not any(a == "--repeat" or a.startswith("--repeat=") for a in args):
        args += ["--repeat", "3"]
    return suite(["--cases", "spark", *args])


if __name__ == "__main__":
    sys.exit(main())
