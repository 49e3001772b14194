"""Console entry point.

Usage errors (a missing argument, an unknown option, a value out of range) are printed as
one ``error:`` line plus a hint, like every other pelctl error, instead of click's box.
"""

from __future__ import annotations

import sys


def main() -> None:
    from pelctl.cli.app import app

    try:
        rv = app(standalone_mode=False)
    except Exception as err:  # click's exceptions, duck-typed: typer vendors click privately
        sys.exit(_report_click_error(err))
    sys.exit(rv if isinstance(rv, int) else 0)


def _report_click_error(err: Exception) -> int:
    name = type(err).__name__
    ctx = getattr(err, "ctx", None)
    if name == "NoArgsIsHelpError" and ctx is not None:
        sys.stdout.write(ctx.get_help() + "\n")
        return 0
    if name == "Abort":
        sys.stderr.write("aborted\n")
        return 1
    if not (hasattr(err, "format_message") and hasattr(err, "exit_code")):
        raise err
    from pelctl.core.binary import clean

    message = clean(" ".join(str(err.format_message()).split()))  # it may quote an argument
    sys.stderr.write(f"error: {message}\n")
    if ctx is not None:
        sys.stderr.write(f"hint: see '{ctx.command_path} --help'\n")
    return int(err.exit_code)


if __name__ == "__main__":
    main()
