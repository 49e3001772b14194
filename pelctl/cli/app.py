"""The typer application with every command registered: ``pelctl.cli.app.app``.

The root callback and the on-demand registration are in pelctl.cli.root; a ``pelctl``
process (pelctl.cli.main) imports only the command module it runs. Importing this module
registers them all, in the order of ``pelctl --help`` (docs, completion scripts, tests).
Command modules stay light: typer and the shared options only. The command layer, redis-py,
tabulate, textual and pyspark load inside the command that needs them.
"""

from __future__ import annotations

from pelctl.cli.root import app, command_for, register

register()

__all__ = ["app", "command_for"]
