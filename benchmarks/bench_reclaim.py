"""``python -m benchmarks.bench_reclaim``: only the reclaim case of the suite.

``pelctl reclaim --once`` on 10,000 idle entries hidden in a 1,000,000-entry PEL, against
the loops of references 001 and 002, in one run on one throwaway redis-server (see
:mod:`benchmarks.cases.reclaim`). Same options as ``python -m benchmarks``; the defaults here
are ``--sizes 1000000 --repeat 3``::

    python -m benchmarks.bench_reclaim
    python -m benchmarks.bench_reclaim --sizes 100000 --repeat 1 --no-save
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
    return suite(["--cases", "reclaim", *args])


if __name__ == "__main__":
    sys.exit(main())
