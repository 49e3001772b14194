"""The reclaim loop (docs/reclaim.md): a sidecar that heals consumer groups, pass after pass.

- :mod:`pelctl.reclaim.model`: the loop's settings and the per-pass counters;
- :mod:`pelctl.reclaim.strategies`: requeue, claim, autoclaim, xreadgroup-claim (and auto),
  all settling entries with the repair scripts of :mod:`pelctl.core.repairs`;
- :mod:`pelctl.reclaim.loop`: the loop (:class:`~pelctl.reclaim.loop.ReclaimLoop`): passes,
  connection, failures; beside it :mod:`~pelctl.reclaim.targets` (the streams, the group and
  ``--to``: missing, found, alive), :mod:`~pelctl.reclaim.reporting` (pass lines, metrics,
  the periodic summary), :mod:`~pelctl.reclaim.audit` (each pass's audit line, failing
  closed), :mod:`~pelctl.reclaim.pacing` (the pause, the backoff),
  :mod:`~pelctl.reclaim.signals` (SIGTERM/SIGINT);
- :mod:`pelctl.reclaim.metrics`: the Prometheus registry and endpoint;
- :mod:`pelctl.reclaim.logs`: structured (JSON) or text log lines, secrets redacted.

Nothing here imports a UI library; ``pelctl.cli.reclaim`` is the thin command on top.
"""
