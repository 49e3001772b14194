"""``python -m benchmarks.requeue_process [--unbounded | --tree DIR] PELCTL-ARGS...``: run
pelctl's CLI with PELCTL-ARGS in this process, as ``pelctl PELCTL-ARGS...`` would; with
``--unbounded``, the repair loop's stall bound is off (rounds as pelctl sent them before the
bound: 4 calls of 100 entries each, two rounds out at once); with ``--tree DIR``, the pelctl
of another source tree (an older commit, extracted there) runs instead of this one. The
server-budget case times a ``requeue --all`` those ways, each in a fresh process like the
user's command.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def unbound() -> None:
    """Every repair loop made from now on runs without the stall bound."""
    from pelctl.core.repairs import script_rounds

    made = script_rounds.EntryRun.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["max_stall_ms"] = float("inf")
        made(self, *args, **kwargs)

    script_rounds.EntryRun.__init__ = init  # type: ignore[method-assign]


def from_tree(tree: str) -> None:
    """pelctl is imported from ``tree`` from now on (checked: not this checkout's)."""
    sys.path.insert(0, tree)
    import pelctl

    where = os.path.realpath(pelctl.__file__)
    if not where.startswith(os.path.realpath(tree) + os.sep):
        raise SystemExit(f"pelctl came from {where}, not from {tree}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--unbounded"]:
        unbound()
        argv = argv[1:]
    elif argv[:1] == ["--tree"]:
        from_tree(argv[1])
        argv = argv[2:]
    from pelctl.cli.main import main as pelctl

    sys.argv = ["pelctl", *argv]
    pelctl()


if __name__ == "__main__":
    main(sys.argv[1:])
