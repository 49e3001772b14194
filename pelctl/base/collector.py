"""The cyclic garbage collector paused around a tight loop (``gc_paused``).

In the bottom layer because every layer that walks a PEL in a loop it controls uses it: the
scan's callers in the command layer (histogram, ghosts, the repairs' selection and script
rounds) and the Spark snapshot.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around a tight aggregation loop.

    Every XPENDING row is a fresh list, so a scan allocates millions of GC-tracked containers;
    the collector's generational passes then cost as much as parsing the replies. The rows
    hold no reference cycles (reference counting frees them), so pausing the collector for the
    length of a loop that we control is safe. Not used by ``PelScan.pages()`` itself: a
    generator hands control to arbitrary caller code.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
