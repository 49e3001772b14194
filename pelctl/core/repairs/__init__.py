"""The repairs of a consumer group's PEL, one module each, over what every executor
shares (:mod:`pelctl.core.script_calls`: calling the repair scripts; :mod:`pelctl.core.
plan_stamp`: where a plan was made; :mod:`pelctl.core.entry_ids`: the ids users give):

- :mod:`~pelctl.core.repairs.entries`: claim, ack, requeue (and the entry planner);
- :mod:`~pelctl.core.repairs.dlq_move`: the dead-letter move;
- :mod:`~pelctl.core.repairs.prune`: consumers prune;
- :mod:`~pelctl.core.repairs.ghosts`: ghosts fix;
- :mod:`~pelctl.core.repairs.select`, :mod:`~pelctl.core.repairs.script_rounds`,
  :mod:`~pelctl.core.repairs.ordered`: choosing entries, running the entry scripts, the
  ordered path (with :mod:`~pelctl.core.repairs.idempotent`: its copies on Redis 8.6+).

Importing a repair's module declares it (:data:`pelctl.core.mutations.PROVIDERS`).
"""
