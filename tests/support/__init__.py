"""Helpers shared by every test tier: whole-server snapshots (``state``), the one guard for
missing tools (``tools``) and the Redis 8.4 stand-in (``fakes``)."""
