"""Helpers shared by every test tier: whole-server snapshots (``state``), the one guard for
missing tools (``tools``), the Redis 8.4 stand-in (``fakes``), the injected clock
(``clock``), and one of each driver: ``waiting.wait_for`` (every poll with a deadline),
``ports.free_port``, ``tmux.Tmux`` (a terminal); redis-servers start through
``tests.support.servers.spawn`` (the ``redis_server`` fixtures too)."""
