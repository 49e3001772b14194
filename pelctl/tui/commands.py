"""The command palette (ctrl+p): the current screen's commands, every stream, theme and help.

Titles and help texts name streams and consumers: they are handed to the palette as
``Content`` (Textual parses a plain string as markup), with the fuzzy match highlighted on
the literal text."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from pelctl.tui.text import content


class _PaletteApp(Protocol):
    """What the palette calls on :class:`pelctl.tui.app.PelctlApp` (not imported here: the
    app imports this module)."""

    def action_toggle_theme(self) -> None: ...
    def action_help(self) -> None: ...
    def action_home(self) -> None: ...


class PelctlCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = cast(_PaletteApp, self.app)
        screen = self.screen
        out: list[tuple[str, str, Callable[[], object]]] = []
        get = getattr(screen, "palette_commands", None)
        if get is not None:
            out.extend(get())
        refresh = getattr(screen, "action_refresh", None)
        if refresh is not None:
            out.append(("Refresh now", "poll the server at once", refresh))
        out.append(
            ("Toggle light / dark theme", "pelctl-dark and pelctl-light", app.action_toggle_theme)
        )
        out.append(("Help: keys", "every key of this screen", app.action_help))
        if getattr(screen, "VIEW", "") != "streams":
            out.append(("Go to the streams list", "", app.action_home))
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(content(title), callback, text=title, help=_help(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    _highlight(matcher, title),
                    partial(callback),
                    text=title,
                    help=_help(help_text),
                )


def _help(help_text: str) -> str:
    # The palette parses ``help`` as markup when it is a string; Content passes through
    # (Content.from_markup takes both), though Hit/DiscoveryHit annotate it ``str | None``.
    return content(help_text)  # type: ignore[return-value]  # Textual's annotation is narrower


def _highlight(matcher: Matcher, title: str) -> Content:
    """``Matcher.highlight`` without its markup parsing: the matched letters of the literal
    (escaped) title in the match style."""
    shown = content(title)
    if shown.plain != title:  # escaping moved the letters: no highlight rather than a wrong one
        return shown
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            shown = shown.stylize(matcher.match_style, offset, offset + 1)
    return shown
