"""Developer tools run from a checkout (never installed): ``make docs``, ``make mutate``."""
