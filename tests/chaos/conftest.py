"""Prints the chaos runs' figures at the end of the session (for the closing note)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter) -> None:
    from tests.chaos import test_chaos_reclaim as chaos
    from tests.chaos import test_kill_cluster as cluster

    for name, figures in cluster.FIGURES.items():
        shown = ", ".join(f"{k} {v:,}" for k, v in figures.items())
        terminalreporter.write_sep("-", f"{name}: {shown}")
    if not chaos.FIGURES:
        return
    f = chaos.FIGURES
    terminalreporter.write_sep(
        "-",
        f"chaos: produced {f['produced']:,}, processed {f['processed']:,}, dead-lettered "
        f"{f['dead_lettered']:,}, lost {f['lost']:,}, duplicates {f['duplicates']:,}, "
        f"worker kills {f['worker_kills']}, reclaim kills {f['reclaim_kills']}, "
        f"redis restarts {f['redis_restarts']}",
    )
