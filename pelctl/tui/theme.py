"""Two themes that read well on dark and on light terminals, and the mapping of the shared
renderers' row styles (plain colour names, see ``pelctl.render``) onto theme colours.

The renderers say "red" for "look at this now", "yellow" for "warning", "green" for "fine" and
"magenta" for "poison suspect"; on a light background plain ANSI yellow is unreadable, so the
dashboard translates those words into the active theme's error / warning / success / accent.
"""

from __future__ import annotations

import os

from rich.style import Style
from textual.theme import Theme

DARK = Theme(
    name="pelctl-dark",
    primary="#5fafff",
    secondary="#3a6ea5",
    accent="#d787ff",
    warning="#ffaf00",
    error="#ff5f5f",
    success="#5fd787",
    foreground="#e4e4e4",
    background="#121212",
    surface="#1c1c1c",
    panel="#262626",
    dark=True,
)
LIGHT = Theme(
    name="pelctl-light",
    primary="#005fd7",
    secondary="#2f5f8f",
    accent="#8b2fc9",
    warning="#9a5b00",
    error="#c0002a",
    success="#00753a",
    foreground="#1c1c1c",
    background="#fafafa",
    surface="#ffffff",
    panel="#e4e4e4",
    dark=False,
)
THEMES = (DARK, LIGHT)
_ROLES = {
    "red": "error",
    "yellow": "warning",
    "green": "success",
    "magenta": "accent",
    "cyan": "primary",
    "blue": "primary",
}


def default_theme_name(environ: dict[str, str] | None = None) -> str:
    """``PELCTL_THEME`` (dark, light or any Textual theme name), else the terminal's
    ``COLORFGBG`` hint (a background colour 7 or 15 means light), else dark."""
    env = os.environ if environ is None else environ
    wanted = (env.get("PELCTL_THEME") or "").strip().lower()
    if wanted in ("dark", "light"):
        return f"pelctl-{wanted}"
    if wanted:
        return wanted
    fgbg = env.get("COLORFGBG", "")
    if fgbg:
        bg = fgbg.split(";")[-1]
        if bg in ("7", "15"):
            return LIGHT.name
    return DARK.name


def role_color(role: str, theme: Theme) -> str | None:
    return getattr(theme, role, None)


def row_style(style: str | None, theme: Theme) -> Style:
    """A renderer's style string ("bold red") with its colour taken from ``theme``."""
    if not style:
        return Style()
    bold = False
    color: str | None = None
    for word in style.split():
        if word == "bold":
            bold = True
        elif word in _ROLES:
            color = role_color(_ROLES[word], theme) or word
        else:
            color = word
    return Style(color=color, bold=bold or None)
