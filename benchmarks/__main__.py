"""``python -m benchmarks``: build the data, run the cases, print the table, save JSON."""

from __future__ import annotations

import argparse
import signal
import sys
import time

from benchmarks import report
from benchmarks.cases import discover
from benchmarks.dataset import BenchServer
from benchmarks.harness import CaseResult, Check, Context


def main(argv: list[str] | None = None) -> int:
    # The processes the cases start get Ctrl-C as a user's shell gives it (the watch is
    # stopped with one). Started in the background of a non-interactive shell, this process
    # has SIGINT ignored and every child would inherit that; a handler here, unlike SIG_IGN,
    # is reset to the default in each child when it execs (tests/conftest.py does the same).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    cases = discover()
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--sizes",
        default="100000,1000000",
        help="PEL sizes, comma-separated (default: 100000,1000000)",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per contender")
    parser.add_argument(
        "--cases", default=",".join(cases), help=f"cases to run (default: all: {', '.join(cases)})"
    )
    parser.add_argument(
        "--url",
        help="use this redis-server (default: a throwaway one); "
        "it must allow CONFIG SET for SLOWLOG",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --url: keep datasets already built by a previous run",
    )
    parser.add_argument(
        "--before",
        help="startup case: also time this pelctl executable (e.g. an older checkout's "
        ".venv/bin/pelctl), interleaved with this one",
    )
    parser.add_argument("--no-save", action="store_true", help="do not write results/*.json")
    args = parser.parse_args(argv)
    sizes = tuple(sorted(int(x.replace("_", "")) for x in args.sizes.split(",") if x.strip()))
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in cases]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(cases)}")

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    server = BenchServer(args.url)
    info = report.machine(server.version)
    results: dict[str, CaseResult] = {}
    t0 = time.perf_counter()
    try:
        ctx = Context(server, sizes, args.repeat, reuse=args.reuse, log=log, before=args.before)
        for size in sizes:
            ds = ctx.dataset(size)
            log(
                f"dataset {ds.label}: {ds.consumers} consumers, {ds.idle:,} idle 1h, "
                f"built in {ds.build_s:.1f} s"
            )
        for name in chosen:
            log(f"case {name}")
            try:
                results[name] = cases[name].run(ctx)
            except Exception as err:  # noqa: BLE001 - one broken case must not hide the rest
                import traceback

                traceback.print_exc()
                results[name] = CaseResult(
                    checks=[Check(f"case {name} ran", None, 0)],
                    notes=[f"case {name} failed: {err!r}"],
                )
    finally:
        server.close()
    info["load_avg_end"] = report._load()
    info["duration_s"] = round(time.perf_counter() - t0, 1)
    print(report.render(results, info))
    if not args.no_save:
        path = report.save(results, info)
        log(f"results written to {path}")
    failed = [c.name for r in results.values() for c in r.checks if not c.ok]
    if failed:
        log("targets missed: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
