"""What ``pelctl exporter`` measures, refresh after refresh: the command layer's side of
monitoring (docs/monitoring.md). :mod:`~pelctl.core.monitor.refresh` reads one server
(:class:`Refresher`), :mod:`~pelctl.core.monitor.status` judges a group's status across
refreshes, :mod:`~pelctl.core.monitor.dead_letters` keeps the dead letters counted by reason,
and :mod:`~pelctl.core.monitor.model` holds the frozen results."""
