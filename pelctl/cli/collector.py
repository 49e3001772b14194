"""The garbage collector around a pelctl process (start-up time): paused for the
start-up, back on (the start-up's objects frozen) for the command, skipped at the exit.

``pelctl.cli.main`` calls :func:`pause`, :func:`freeze_at_exit` and :func:`end_pause`; the
root callback (``pelctl.cli.root``) calls :func:`resume` before any command runs.
"""

from __future__ import annotations

import gc

_paused = False  # collections paused by pause() for the start-up
_frozen = False  # the start-up's objects frozen by resume()


def pause() -> None:
    """No garbage collections during the start-up: until :func:`resume` (the root
    callback, before any command, its help included: pelctl.cli.root), for the whole of the
    root's help or a TAB, which end before it.

    Importing typer, rich and redis-py allocates a few hundred thousand objects that live
    until the exit: the collector would run 40-80 times over them and find next to nothing
    (10-20 ms of CPU of a 0.3 s process). They are then frozen (:func:`gc.freeze`),
    so that the first collection after the pause, and every later full one, skips them: a
    command runs with the collector on over what it makes itself.
    """
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Freeze what the start-up made and turn collections back on, if :func:`pause`
    turned them off."""
    global _paused, _frozen
    if _paused:
        gc.freeze()
        _frozen = True
        _paused = False
        gc.enable()


def end_pause() -> None:
    """After the command: collections on, and the frozen objects back in the collector's
    care (a caller in-process keeps its heap as it was; at the exit they are frozen again)."""
    global _frozen
    resume()
    if _frozen:
        _frozen = False
        gc.unfreeze()


def freeze_at_exit() -> None:
    """At exit, freeze what is alive (:func:`gc.freeze`) before the interpreter tears down.

    Python's shutdown runs several full garbage collections over every object the imported
    modules made: with redis-py, typer and rich loaded, 40-90 ms of CPU, a fifth of a short
    command's whole process. Frozen objects are left to the process's end, as
    ``os._exit`` would leave them, but every other exit step still runs: atexit handlers
    (registered after this one: they run first), the flush of stdout and stderr, module
    teardown. What is lost are finalizers of objects in reference cycles at exit, which
    Python never promises; pelctl closes its connections and files itself (``with``, the
    command runtime's ``close``) before it returns.
    """
    import atexit

    atexit.register(gc.freeze)
