"""The bottom layer: typed errors, durations, paths and binary-name escaping.

Imports nothing else of pelctl (tests/unit/test_layers.py).
"""
