"""The one terminal driver: a command in a private tmux server (its own socket, so tests
never touch a developer's sessions), typed at with keys and read back from the screen."""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.support.waiting import wait_for


class Tmux:
    """``command`` running in a ``size`` terminal; ``env`` is exported for it."""

    def __init__(
        self,
        command: str,
        *,
        size: tuple[int, int] = (160, 40),
        env: dict[str, str] | None = None,
        socket_dir: Path | None = None,
    ) -> None:
        self._dir = None if socket_dir is not None else tempfile.TemporaryDirectory()
        base = socket_dir if socket_dir is not None else Path(self._dir.name)  # type: ignore[union-attr]
        self.socket = str(base / "tmux.sock")
        if env:
            exports = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
            command = f"env {exports} {command}"
        self._tmux("new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-s", "t", command)

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=check
        )

    def keys(self, *keys: str) -> None:
        """Type ``keys`` (the program reads them in order; callers wait for what they cause)."""
        self._tmux("send-keys", "-t", "t", *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t", check=False).stdout

    def wait_for(self, pred: Callable[[str], object], what: str, timeout: float = 60.0) -> str:
        """The screen, once ``pred(screen)`` holds."""

        def seen() -> tuple[str] | None:
            screen = self.screen()
            return (screen,) if pred(screen) else None  # a blank screen is an answer too

        return wait_for(
            seen, what, timeout, interval=0.05, describe=lambda: f"screen:\n{self.screen()}"
        )[0]

    def wait_text(self, *texts: str, timeout: float = 60.0) -> str:
        """The screen, once every one of ``texts`` is on it."""
        return self.wait_for(lambda s: all(t in s for t in texts), f"{texts} on screen", timeout)

    def wait_gone(self, text: str, timeout: float = 60.0) -> str:
        """The screen, once ``text`` is no longer on it."""
        return self.wait_for(lambda s: text not in s, f"{text!r} to leave the screen", timeout)

    def close(self) -> None:
        self._tmux("kill-server", check=False)
        if self._dir is not None:
            self._dir.cleanup()
