"""The command palette (ctrl+p): the current screen's commands, every stream, theme and help."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class PelctlCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
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
        )  # type: ignore[attr-defined]
        out.append(("Help: keys", "every key of this screen", app.action_help))  # type: ignore[attr-defined]
        if getattr(screen, "VIEW", "") != "streams":
            out.append(("Go to the streams list", "", app.action_home))  # type: ignore[attr-defined]
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(callback), help=help_text)
