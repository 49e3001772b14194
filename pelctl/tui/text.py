"""How data reaches the dashboard's screen: never as markup, never with a control character.

Names, fields, values, reasons and server error texts are data, and data is hostile
(docs/security.md): ``g[/]`` would stop the app with a MarkupError, ``[@click=app.quit]`` in a
border title would become an action, ``\\x1b]52;...`` would write the clipboard. Every widget
that shows data gets it through these helpers: :func:`text` (a rich ``Text``, for DataTable
cells, rich tables and Static/Label content) or :func:`content` (a Textual ``Content``, for
border titles and labels), both escaped with :func:`pelctl.base.binary.clean`.
Notifications go through :meth:`pelctl.tui.app.PelctlApp.notify`, which does the same.
"""

from __future__ import annotations

from rich.console import JustifyMethod
from rich.style import Style
from rich.text import Text
from textual.content import Content

from pelctl.base.binary import clean


def text(value: str, style: str | Style = "", *, justify: JustifyMethod | None = None) -> Text:
    """``value`` as a rich ``Text``: shown literally, control characters escaped."""
    return Text(clean(value), style=style, justify=justify)


def content(value: str, keep: str = "") -> Content:
    """``value`` as Textual ``Content`` (not markup): for border titles, labels, prompts."""
    return Content(clean(value, keep=keep))
