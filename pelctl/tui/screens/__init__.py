"""Dashboard screens, one per module."""
