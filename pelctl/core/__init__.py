"""The command layer: plain functions on a Redis connection returning frozen dataclasses.

Nothing in this package imports typer, rich, textual, tabulate or pyspark (a test enforces it).
"""
