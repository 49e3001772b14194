"""Console entry point.

Usage errors (a missing argument, an unknown option, a value out of range) are printed as
one ``error:`` line plus a hint, like every other pelctl error, instead of click's box.
"""

from __future__ import annotations

import gc
import sys

_paused = False  # collections paused by main() for the start-up
_frozen = False  # the start-up's objects frozen by resume_collections()


def main() -> None:
    _pause_collections()
    _no_collections_at_exit()
    try:
        from pelctl.cli.root import command_for

        # What typer's app() does, building only the command the arguments name.
        rv = command_for(sys.argv[1:])(standalone_mode=False)
    except Exception as err:  # noqa: BLE001 - click's exceptions, duck-typed: typer vendors click privately
        sys.exit(_report_click_error(err))
    finally:
        _end_collection_pause()
    sys.exit(rv if isinstance(rv, int) else 0)


def _pause_collections() -> None:
    """No garbage collections during the start-up: until :func:`resume_collections` (the
    root callback, before any command, its help included: pelctl.cli.root), for the whole
    of the root's help or a TAB, which end before it.

    Importing typer, rich and redis-py allocates a few hundred thousand objects that live
    until the exit: the collector would run 40-80 times over them and find next to nothing
    (10-20 ms of CPU of a 0.3 s process, issue 15). They are then frozen (:func:`gc.freeze`),
    so that the first collection after the pause, and every later full one, skips them: a
    command runs with the collector on over what it makes itself.
    """
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collections() -> None:
    """Freeze what the start-up made and turn collections back on, if :func:`main` paused
    them."""
    global _paused, _frozen
    if _paused:
        gc.freeze()
        _frozen = True
        _paused = False
        gc.enable()


def _end_collection_pause() -> None:
    """After the command: collections on, and the frozen objects back in the collector's
    care (a caller in-process keeps its heap as it was; at the exit they are frozen again)."""
    global _frozen
    resume_collections()
    if _frozen:
        _frozen = False
        gc.unfreeze()


def _no_collections_at_exit() -> None:
    """At exit, freeze what is alive (:func:`gc.freeze`) before the interpreter tears down.

    Python's shutdown runs several full garbage collections over every object the imported
    modules made: with redis-py, typer and rich loaded, 40-70 ms of CPU, a fifth of a short
    command's whole process (issue 15). Frozen objects are left to the process's end, as
    ``os._exit`` would leave them, but every other exit step still runs: atexit handlers
    (registered after this one: they run first), the flush of stdout and stderr, module
    teardown. What is lost are finalizers of objects in reference cycles at exit, which
    Python never promises; pelctl closes its connections and files itself (``with``, the
    command runtime's ``close``) before it returns.
    """
    import atexit

    atexit.register(gc.freeze)


def _report_click_error(err: Exception) -> int:
    name = type(err).__name__
    ctx = getattr(err, "ctx", None)
    if name == "NoArgsIsHelpError":
        # click made the help when it raised this: typer's rich help printed it then (the
        # message is empty), a plain help is the message. Printed as --help prints it.
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
        message = clean(" ".join(str(err.message).split()))
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
    found += [n for n in difflib.get_close_matches(word, names, n=3, cutoff=0.6)
              if n not in found]  # fmt: skip
    return [f"--{n}" for n in found[:3]]


if __name__ == "__main__":
    main()
