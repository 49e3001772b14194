"""Prints the chaos run's figures at the end of the session (for the closing note)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter) -> None:
    from tests.chaos import test_chaos_reclaim as chaos

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
