"""pelctl: inspect and safely repair Redis Streams consumer-group Pending Entries Lists."""

__version__ = "0.1.0"
