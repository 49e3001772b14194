"""The dead-letter queue lifecycle: list, show, stats, replay (exactly once), purge.

A dead-letter stream (DLQ) holds entries moved there by ``pelctl dlq move`` (or by
``requeue --max-retries``, the reclaim loop, ``ReliableConsumer``): the original fields,
untouched, followed by the envelope (docs/formats.md, "Dead-letter entry").

- :mod:`~pelctl.core.dlq.envelope`: the dead-letter entry (its fields, written and parsed),
  dead-letter stream names;
- :mod:`~pelctl.core.dlq.read`: finding DLQs, listing, showing, counting (``stats``);
- :mod:`~pelctl.core.dlq.common`: what replay and purge share (targets, options, rounds of
  batches, ``plan_dlq``, ``params``);
- :mod:`~pelctl.core.dlq.replay` (with :mod:`~pelctl.core.dlq.copies` and
  :mod:`~pelctl.core.dlq.replayer`) and :mod:`~pelctl.core.dlq.purge`: the two mutations.

The names docs/dlq.md gives the library (``from pelctl.core import dlq``; ``dlq.plan_dlq``,
``dlq.DlqTargets``, ...) load from those modules on first use.
"""

from __future__ import annotations

# The library surface of docs/dlq.md ("For other surfaces"): name -> module.
_LIBRARY = {
    "plan_dlq": "pelctl.core.dlq.common",
    "params": "pelctl.core.dlq.common",
    "DlqTargets": "pelctl.core.dlq.common",
    "ReplayOptions": "pelctl.core.dlq.common",
    "iter_entries": "pelctl.core.dlq.read",
    "get_entry": "pelctl.core.dlq.read",
    "stats": "pelctl.core.dlq.read",
    "discover": "pelctl.core.dlq.read",
    "is_dlq_name": "pelctl.core.dlq.envelope",
}


def __getattr__(name: str) -> object:
    module = _LIBRARY.get(name)
    if module is None:
        raise AttributeError(f"module 'pelctl.core.dlq' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_LIBRARY))
