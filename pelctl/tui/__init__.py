"""``pelctl tui``: the incident dashboard (Textual).

Only ``app``, ``screens/``, ``widgets/`` and ``theme`` import textual. The data access
(``source``), the streaming aggregation (``aggregate``) and the action declarations
(``actions``) are headless: a test imports them and checks that textual and rich stay unloaded.
"""
