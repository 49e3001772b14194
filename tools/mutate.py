"""``make mutate``: mutation testing (mutmut 3) of the modules where a silent bug costs most.

Each module runs in its own scratch directory (``.mutate/<name>/``) with its own mutmut
configuration: the file(s) to mutate, optionally the functions to mutate (mutant-name
globs), and a FAST test selection of its own. mutmut then runs, for each mutant, only the
tests of that selection that reach the mutated function.

    python tools/mutate.py                 # every module, then the score table
    python tools/mutate.py histogram scan  # some modules
    python tools/mutate.py --list          # the modules and their test selections
    python tools/mutate.py --report        # the table of the last runs, no new run
    python tools/mutate.py --rerun scan    # its survivors again, with the tests added since
    python tools/mutate.py -j 2 scan       # two mutants at a time (default: one)

The score is killed / (killed + survived + timeout + no tests): a timeout counts against it
(it is not a kill we can trust), so does a mutant no selected test reaches. Survivors are
listed by name; ``--show NAME`` prints a survivor's diff (``mutmut show`` in its directory).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutate"
MUTMUT = Path(sys.executable).parent / "mutmut"


@dataclass(frozen=True)
class Module:
    paths: tuple[str, ...]  # files to mutate
    tests: tuple[str, ...]  # pytest selection (files or node ids)
    only: tuple[str, ...] = ()  # mutant-name globs; () = every function of the files
    note: str = ""
    # A mutant that loops or waits for a reply that never comes: pytest-timeout's limit per
    # test (s), and mutmut's CPU-time limit (x the clean run of the mutant's tests).
    test_timeout: int = 600
    cpu_multiplier: float = 10.0


MODULES: dict[str, Module] = {
    "histogram": Module(
        ("pelctl/core/histogram.py", "pelctl/core/buckets.py"),
        (
            "tests/unit/test_buckets.py",
            "tests/integration/test_histogram.py",
            "tests/integration/test_histogram_details.py",
        ),
    ),
    "inspect": Module(
        # the report (inspect.py), the PEL health walk (health.py), the advice and the lock
        # detection: what was pelctl/core/inspect.py before it was split
        (
            "pelctl/core/inspect.py",
            "pelctl/core/health.py",
            "pelctl/core/advice.py",
            "pelctl/core/locks.py",
        ),
        (
            "tests/unit/test_inspect_units.py",
            "tests/unit/test_buckets.py",
            "tests/unit/test_advice.py",
            "tests/integration/test_lock_probe.py",
            "tests/integration/test_histogram.py",
            "tests/integration/test_inspect_edges.py",
            "tests/integration/test_read_commands.py",
            "tests/integration/test_lock_detection.py",
            "tests/integration/test_liveness.py",
            "tests/integration/test_pel_health.py",
            "tests/integration/test_inspect_report.py",
            "tests/topologies/test_valkey_inspect.py",
        ),
        only=(
            "pelctl.core.inspect.*",
            "pelctl.core.health.*",
            "pelctl.core.advice.x_advise__mutmut_*",
            "pelctl.core.advice.x__requeue_tail__mutmut_*",
            "pelctl.core.advice.x__who__mutmut_*",
            "pelctl.core.advice.x__names__mutmut_*",
            "pelctl.core.advice.x__unknown_advice__mutmut_*",
            "pelctl.core.advice.x__entries__mutmut_*",
            "pelctl.core.advice.x__idle_at_least__mutmut_*",
            "pelctl.core.locks.x_detect_lock_key__mutmut_*",
        ),
        note="the functions of the former pelctl/core/inspect.py",
    ),
    "mutations": Module(
        (
            "pelctl/core/mutations/__init__.py",
            "pelctl/core/mutations/api.py",
            "pelctl/core/mutations/declaration.py",
            "pelctl/core/mutations/model.py",
            "pelctl/core/mutations/outcomes.py",
        ),
        (
            "tests/unit/test_mutations.py",
            "tests/unit/test_repair_units.py",
            "tests/integration/test_repair_plans.py",
        ),
    ),
    "plan": Module(
        (
            "pelctl/core/plan/__init__.py",
            "pelctl/core/plan/checks.py",
            "pelctl/core/plan/document.py",
            "pelctl/core/plan/fields.py",
            "pelctl/core/plan/file.py",
            "pelctl/core/plan/sealing.py",
        ),
        (
            "tests/unit/test_plan_json.py",
            "tests/unit/test_plan_file.py",
            "tests/integration/test_plan_checks.py",
            "tests/integration/test_repair_plans.py",
            "tests/cli/test_plan_trust.py",
        ),
    ),
    "repair-planning": Module(
        (
            "pelctl/core/entry_ids.py",
            "pelctl/core/repairs/select.py",
            "pelctl/core/repairs/entries.py",
            "pelctl/core/repairs/prune.py",
            "pelctl/core/repairs/ghosts.py",
        ),
        (
            "tests/unit/test_repair_units.py",
            "tests/integration/test_repair_planning.py",
            "tests/integration/test_repair_plans.py",
            "tests/integration/test_repair_entries.py",
            "tests/integration/test_repair_consumers.py",
        ),
        only=(
            "pelctl.core.entry_ids.x_normalize_ids__mutmut_*",
            "pelctl.core.repairs.select.x_pending_rows__mutmut_*",
            "pelctl.core.repairs.entries.x_plan_entries__mutmut_*",
            "pelctl.core.repairs.entries.x__flag_poison__mutmut_*",
            "pelctl.core.repairs.prune.x_plan_prune__mutmut_*",
            "pelctl.core.repairs.ghosts.x_plan_ghosts__mutmut_*",
        ),
        note="planning functions only (the apply_* runners are covered by the kill tests)",
    ),
    "dlq-planning": Module(
        (
            "pelctl/core/dlq/read.py",
            "pelctl/core/dlq/common.py",
            "pelctl/core/dlq/replay.py",
            "pelctl/core/dlq/purge.py",
        ),
        (
            "tests/integration/test_dlq_planning.py",
            "tests/integration/test_dlq_replay.py",
            "tests/integration/test_dlq_read.py",
        ),
        only=(
            "pelctl.core.dlq.read.x_parse_time_bound__mutmut_*",
            "pelctl.core.dlq.common.x_parse_rate__mutmut_*",
            "pelctl.core.dlq.common.x_select__mutmut_*",
            "pelctl.core.dlq.replay.x_plan_replay__mutmut_*",
            "pelctl.core.dlq.purge.x_plan_purge__mutmut_*",
            "pelctl.core.dlq.common.x_batch_for_rate__mutmut_*",
        ),
        note="planning functions only",
    ),
    "scan": Module(
        ("pelctl/redis/scan.py",),
        ("tests/unit/test_scan_units.py", "tests/integration/test_scan.py"),
        # a mutated paging loop can wait forever for a reply: no scan test needs 60 s
        test_timeout=60,
        cpu_multiplier=3.0,
    ),
    "durations": Module(
        ("pelctl/base/durations.py",),
        ("tests/unit/test_durations.py",),
    ),
}

# mutmut's exit codes (mutmut.stats.status_by_exit_code); anything else counts as not killed.
KILLED, SURVIVED, NO_TESTS = {1, 3}, {0}, {5, 33}
TIMEOUT = {-24, 24, 36, 152, 255}


@dataclass
class Score:
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    timeout: list[str] = field(default_factory=list)
    no_tests: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        n = len(self.survived) + len(self.timeout) + len(self.no_tests) + len(self.other)
        return self.killed + n


def _config(mod: Module) -> str:
    def toml_list(items: tuple[str, ...] | list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"

    return (
        "[tool.mutmut]\n"
        'source_paths = ["pelctl"]\n'
        f"only_mutate = {toml_list(mod.paths)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(mod.tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x", "-m", "not slow",'
        f' "--timeout={mod.test_timeout}"]\n'
        # the JSON Schemas of docs/schemas/ check every audit line and JSON output a test makes
        'also_copy = ["docs"]\n'
        "use_git_change_detection = false\n"
        f"timeout_multiplier = {mod.cpu_multiplier}\n"
    )


def prepare(name: str, mod: Module) -> Path:
    """A scratch directory: the package, the tests and a pyproject.toml with this module's
    mutmut section. Fresh each run so the scores never come from a stale cache."""
    work = WORK / name
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    shutil.copytree(ROOT / "pelctl", work / "pelctl", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "docs", work / "docs")
    text = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(text + "\n" + _config(mod))
    return work


ELAPSED = {"run": "elapsed", "rerun": "rerun-elapsed"}  # the file each kind of run leaves


def _mutmut(name: str, work: Path, jobs: int, mutants: Sequence[str], label: str) -> float:
    """``mutmut run`` of ``mutants`` in ``work``, its output in ``mutmut-<label>.log`` (written
    as it goes: `tail -f` it to follow a long run), its time in ``work/<label>-elapsed``."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    # mutmut's default is one child per CPU; the machine is shared, so one unless told.
    cmd = [str(MUTMUT), "run", "--max-children", str(jobs), *mutants]
    t0 = time.monotonic()
    log = work / f"mutmut-{label}.log"
    with log.open("wb") as out:
        proc = subprocess.run(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
    elapsed = time.monotonic() - t0
    if proc.returncode != 0:
        tail = log.read_bytes().decode(errors="replace")[-3000:]
        raise SystemExit(f"error: mutmut failed for {name} (exit {proc.returncode})\n{tail}")
    (work / ELAPSED[label]).write_text(f"{elapsed:.0f}\n")
    return elapsed


def run(name: str, mod: Module, jobs: int = 1) -> float:
    work = prepare(name, mod)
    print(f"== {name}: {' '.join(mod.paths)}  ({len(mod.tests)} test files)", flush=True)
    return _mutmut(name, work, jobs, mod.only, "run")


def rerun(name: str, mod: Module, jobs: int = 1) -> float:
    """Run the last run's mutants that were not killed again, against today's tests (the
    package copy and every other mutant's result stay): after adding tests for survivors,
    the score without a full run. The test-to-function map is rebuilt (new tests)."""
    work = WORK / name
    s = score(name, mod)
    names = sorted(s.survived + s.timeout + s.no_tests + s.other)
    for sub in ("tests", "docs"):
        shutil.rmtree(work / sub, ignore_errors=True)
        shutil.copytree(ROOT / sub, work / sub, ignore=shutil.ignore_patterns("__pycache__"))
    text = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(text + "\n" + _config(mod))
    (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    print(f"== {name}: {len(names)} mutant(s) not killed, again", flush=True)
    return _mutmut(name, work, jobs, names, "rerun")


def score(name: str, mod: Module) -> Score:
    import fnmatch

    s = Score()
    for meta in (WORK / name / "mutants").rglob("*.meta"):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        for key, code in codes.items():
            if mod.only and not any(fnmatch.fnmatch(key, g) for g in mod.only):
                continue
            if code is None:
                s.other.append(key)
            elif code in TIMEOUT:
                s.timeout.append(key)
            elif code in KILLED:
                s.killed += 1
            elif code in SURVIVED:
                s.survived.append(key)
            elif code in NO_TESTS:
                s.no_tests.append(key)
            else:
                s.other.append(key)
    return s


def report(names: list[str]) -> None:
    print()
    print(f"{'module':<17} {'killed':>7} {'total':>6} {'score':>7} {'time':>6}  not killed")
    for name in names:
        mod = MODULES[name]
        s = score(name, mod)
        elapsed, again = (WORK / name / ELAPSED[k] for k in ("run", "rerun"))
        secs = elapsed.read_text().strip() + "s" if elapsed.exists() else "-"
        secs += f"+{again.read_text().strip()}s" if again.exists() else ""
        pct = f"{100.0 * s.killed / s.total:.1f}%" if s.total else "-"
        rest = len(s.survived) + len(s.timeout) + len(s.no_tests) + len(s.other)
        print(f"{name:<17} {s.killed:>7} {s.total:>6} {pct:>7} {secs:>6}  {rest}")
        for label, keys in (
            ("survived", s.survived),
            ("timeout", s.timeout),
            ("no tests", s.no_tests),
            ("not run", s.other),
        ):
            for key in sorted(keys):
                print(f"    {label}: {key}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help=f"any of: {', '.join(MODULES)}")
    ap.add_argument("--list", action="store_true", help="list the modules and test selections")
    ap.add_argument("--report", action="store_true", help="print the last runs' scores only")
    ap.add_argument(
        "--rerun", action="store_true", help="the last run's survivors again, with today's tests"
    )
    ap.add_argument("--show", metavar="MUTANT", help="print one mutant's diff")
    ap.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="mutants tested at a time (mutmut --max-children; default 1)",
    )
    args = ap.parse_args(argv)
    names = args.modules or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(f"error: unknown module {unknown[0]!r}", file=sys.stderr)
        print(f"hint: one of {', '.join(MODULES)}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"error: --jobs must be at least 1, not {args.jobs}", file=sys.stderr)
        return 2
    if args.list:
        for name in names:
            mod = MODULES[name]
            print(f"{name}: {' '.join(mod.paths)}" + (f"  ({mod.note})" if mod.note else ""))
            for t in mod.tests:
                print(f"    {t}")
        return 0
    if args.show:

        def dotted(path: str) -> str:  # pelctl/core/plan/__init__.py -> pelctl.core.plan.
            return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".") + "."

        name = next(
            (
                n
                for n in names
                if (WORK / n / "mutants").exists()
                and any(args.show.startswith(dotted(p)) for p in MODULES[n].paths)
            ),
            None,
        )
        if name is None:
            print(f"error: no run holds {args.show!r}", file=sys.stderr)
            return 3
        return subprocess.run([str(MUTMUT), "show", args.show], cwd=WORK / name).returncode
    if args.rerun:
        missing = [n for n in names if not (WORK / n / "mutants").exists()]
        if missing:
            print(f"error: no run of {missing[0]!r} to run again", file=sys.stderr)
            print(f"hint: make mutate MODULE={missing[0]}", file=sys.stderr)
            return 3
        for name in names:
            rerun(name, MODULES[name], args.jobs)
    elif not args.report:
        t0 = time.monotonic()
        for name in names:
            run(name, MODULES[name], args.jobs)
        print(f"\nmake mutate: {time.monotonic() - t0:.0f}s for {len(names)} module(s)")
    report(names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
