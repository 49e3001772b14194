"""The typer CLI: a thin caller of the command layer. Imports stay lazy for fast start-up."""
