"""Fixtures for the dashboard tests: the demo incident on the session's real redis-server,
an app factory over a real :class:`RedisSource`, and a message recorder for ``message_hook``."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import redis
from textual.worker import WorkerCancelled

from pelctl.demo.server import seed


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests in a fresh event loop (no async plugin is installed)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**args))
    return True


@dataclass
class Recorder:
    """Every message the app's pumps dispatch, with the time it was dispatched."""

    messages: list[tuple[float, object]] = field(default_factory=list)
    _seen: set[int] = field(default_factory=set)

    def __call__(self, message: object) -> None:
        # A bubbling message reaches several pumps: keep its first dispatch only.
        if id(message) in self._seen:
            return
        self._seen.add(id(message))
        self.messages.append((time.perf_counter(), message))

    def of(
        self, kind: type, where: Callable[[object], bool] | None = None, **attrs: object
    ) -> list:
        return [
            m
            for _, m in self.messages
            if isinstance(m, kind)
            and all(getattr(m, k) == v for k, v in attrs.items())
            and (where is None or where(m))
        ]

    def count(self, kind: type, **attrs: object) -> int:
        return len(self.of(kind, None, **attrs))

    async def refreshed(
        self, view: str, where: Callable[[object], bool] | None = None, timeout: float = 10.0
    ) -> object:
        """The data of the first refresh of ``view`` whose data satisfies ``where``."""
        from pelctl.tui.messages import Refreshed

        msg = await self.wait_for(
            Refreshed, timeout, view=view, where=None if where is None else lambda m: where(m.data)
        )
        return msg.data  # type: ignore[attr-defined]

    async def wait_for(
        self,
        kind: type,
        timeout: float = 10.0,
        after: int = 0,
        where: Callable[[object], bool] | None = None,
        **attrs: object,
    ) -> object:
        """The first message of ``kind`` (matching ``attrs`` and ``where``) beyond the first
        ``after`` ones."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of(kind, where, **attrs)
            if len(found) > after:
                return found[after]
            await asyncio.sleep(0.02)
        seen = sorted({type(m).__name__ for _, m in self.messages})
        raise AssertionError(f"no {kind.__name__} {attrs} within {timeout}s; seen: {seen}")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def demo(r: redis.Redis, redis_server):
    """The demo incident (``pelctl demo up``'s data) seeded into the flushed session server."""
    seed(r)
    return redis_server


@pytest.fixture
def make_app(redis_server) -> Iterator[Callable[..., object]]:
    """Build a PelctlApp over a real RedisSource on the session server."""
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.app import PelctlApp
    from pelctl.tui.source import RedisSource

    sources: list[RedisSource] = []

    def build(
        *, read_only: bool = False, url: str | None = None, source: object = None, **kwargs: object
    ) -> PelctlApp:
        if source is None:
            settings = ConnectionSettings(url=url or redis_server.url, read_only=read_only)
            source = RedisSource.connect(settings)
        sources.append(source)  # type: ignore[arg-type]
        kwargs.setdefault("refresh_s", 0)
        kwargs.setdefault("top_n", 50)
        kwargs.setdefault("theme_name", "pelctl-dark")
        return PelctlApp(source, **kwargs)  # type: ignore[arg-type]

    yield build
    for s in sources:
        try:
            s.close()
        except Exception:  # noqa: BLE001
            pass


async def settle(pilot, screen_type: type | None = None, timeout: float = 10.0) -> None:
    """Wait until the workers are done and (optionally) ``screen_type`` is on top."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            # An exclusive worker replaced by a newer one (a refresh that came while the
            # last was still running, as on a loaded machine): wait for the newer one.
            if time.monotonic() > deadline:
                raise AssertionError(f"workers kept being replaced on {app.screen!r}") from None
            continue
        await pilot.pause()
        if screen_type is None or isinstance(app.screen, screen_type):
            busy = getattr(app.screen, "busy", False)
            if not busy:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"screen is {app.screen!r}, wanted {screen_type}")
        await asyncio.sleep(0.02)


async def until(pilot, condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Poll ``condition`` between frames until it holds (a generous deadline, never a fixed
    sleep: a shared 2-core machine makes any fixed delay too short some day)."""
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        if condition():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s (screen {pilot.app.screen!r})")
        await asyncio.sleep(0.02)
