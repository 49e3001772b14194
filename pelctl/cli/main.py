"""Console entry point.

Usage errors (a missing argument, an unknown option, a value out of range) are printed as
one ``error:`` line plus a hint, like every other pelctl error, instead of click's box.
"""

from __future__ import annotations

import sys

from pelctl.cli import collector


def main() -> None:
    collector.pause()
    collector.freeze_at_exit()
    try:
        from pelctl.cli.root import command_for

        # What typer's app() does, building only the command the arguments name.
        rv = command_for(sys.argv[1:])(standalone_mode=False)
    except Exception as err:  # noqa: BLE001 - click's exceptions, duck-typed: typer vendors click privately
        sys.exit(_report_click_error(err))
    finally:
        collector.end_pause()
    sys.exit(rv if isinstance(rv, int) else 0)


def _report_click_error(err: Exception) -> int:
    name = type(err).__name__
    ctx = getattr(err, "ctx", None)
    if name == "NoArgsIsHelpError":
        # click made the help when it raised this: typer's rich help printed it then (the
        # message is empty), a plain help is the message. Printed as --help prints it.
        # (Matched by name, not by class: that needs no click import here, so the checker
        # only knows an Exception, which has no format_message.)
        sys.stdout.write(str(err.format_message()) + "\n")  # type: ignore[attr-defined]
        return 0
    if name == "Abort":
        sys.stderr.write("aborted\n")
        return 1
    if not (hasattr(err, "format_message") and hasattr(err, "exit_code")):
        raise err
    from pelctl.base.binary import clean

    if name == "NoSuchOption":
        # click's own suggestion compares with every long option, the leading dashes
        # included ("--sort" -> "--tls-cert"): say only what is close, from this command.
        message = clean(" ".join(str(getattr(err, "message", "")).split()))
        close = suggest_options(str(getattr(err, "option_name", "")), ctx)
        sys.stderr.write(f"error: {message}\n")
        if ctx is not None:
            mean = f"did you mean {' or '.join(close)}? " if close else ""
            sys.stderr.write(f"hint: {mean}see '{ctx.command_path} --help'\n")
        return int(err.exit_code)
    message = clean(" ".join(str(err.format_message()).split()))  # it may quote an argument
    sys.stderr.write(f"error: {message}\n")
    if ctx is not None:
        sys.stderr.write(f"hint: see '{ctx.command_path} --help'\n")
    return int(err.exit_code)


# Options people type from other tools, and this command's option they mean.
_MEANT = {"max-deliveries": "below-deliveries"}  # reclaim's --max-deliveries is another thing


def suggest_options(typed: str, ctx: object) -> list[str]:
    """Up to three long options of the command in ``ctx`` close to ``typed``: those it is
    a prefix of, then difflib's close matches of the names without their dashes."""
    import difflib

    command = getattr(ctx, "command", None)
    if not typed.startswith("--") or command is None:
        return []
    names: list[str] = []
    for param in getattr(command, "params", ()):
        for opt in [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]:
            if opt.startswith("--") and opt[2:] not in names:
                names.append(opt[2:])
    word = typed[2:].split("=", 1)[0]
    if not word:
        return []
    found = [n for n in names if _MEANT.get(word) == n]
    found += [n for n in names if n.startswith(word) and n not in found]
    found += [n for n in difflib.get_close_matches(word, names, n=3, cutoff=0.6) if n not in found]
    return [f"--{n}" for n in found[:3]]


if __name__ == "__main__":
    main()
