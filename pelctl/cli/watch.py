"""``--watch`` on the read commands: the same command again every ``--interval``.

One loop for ``streams``, ``inspect`` and ``pending`` (:func:`watchable` adds the options
to a command). A *frame* is one run of the command, captured whole before it is shown, so a
frame is never half written and never overlaps the next one: the next frame starts
``--interval`` after the previous one started, or at once when it took longer (a slow
frame is not queued, it delays the next). Each frame runs the command's own calls once.

- On a terminal every frame redraws the screen in place (cursor home, each line cleared,
  the rest of the screen cleared: no flicker), under a header line like ``watch``'s; a
  frame taller than the screen is cut, saying how many lines are not shown.
- In a pipe frames are appended. Text formats (``plain``, ``markdown``, ``table``, and
  ``csv``/``tsv``) put a ``# <UTC time> frame N`` line before each frame; ``json`` writes
  each frame's document on one line (NDJSON of frames); ``ndjson`` writes a marker
  ``{"frame": N, "at": ..., "records": K}`` and then the frame's K records. docs/formats.md
  has the details.
- Errors: the first frame's "this cannot work" errors (a usage error, a missing stream or
  group, wrong credentials, a missing ACL permission) end the command with their exit code
  as without ``--watch``. Otherwise a frame that fails (the server gone, a stream deleted
  meanwhile) is shown as its ``error:`` line and retried with backoff (``--interval``
  doubled per failure, at most 30 s), never a traceback (``-v`` adds it).
- Ctrl-C ends the watch quietly with exit 0. ``--count N`` stops after N frames; the exit
  code is then the last frame's (0, or its error's code).
- The server's time: the frames use at most ``--max-server-share`` of it (5% by default;
  ``PELCTL_MAX_SERVER_SHARE``, the context's ``max_server_share``), counted from their own
  calls (:class:`pelctl.core.budget.Budget`, docs/server-budget.md). ``inspect`` reads its
  summaries every frame and walks each group's PEL as often as the budget allows (the
  frame says how old the walk is); a command with nothing to sample (``pending``,
  ``streams``) has its frames spaced out when one frame costs more than the share of an
  interval, said once on stderr. The header on a terminal (and the ``server_share`` of an
  ``ndjson`` marker) gives the share used so far.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import shutil
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer

WATCH_PANEL = "Watch"
DEFAULT_INTERVAL = "2s"
MIN_INTERVAL_S = 0.1
MAX_BACKOFF_S = 30.0

WatchOpt = Annotated[
    bool,
    typer.Option(
        "--watch",
        "-w",
        help="Run again every --interval: redraw on a terminal, append "
        "frames in a pipe. Ctrl-C stops.",
        rich_help_panel=WATCH_PANEL,
    ),
]
IntervalOpt = Annotated[
    str,
    typer.Option(
        "--interval",
        help="Time between --watch frames (any duration).",
        rich_help_panel=WATCH_PANEL,
    ),
]
CountOpt = Annotated[
    Optional[int],
    typer.Option(
        "--count",
        min=1,
        help="With --watch: stop after N frames.",
        rich_help_panel=WATCH_PANEL,
        show_default=False,
    ),
]
MaxShareOpt = Annotated[
    Optional[str],
    typer.Option(
        "--max-server-share",
        help="With --watch: the most of the server's time to use (default 5%).",
        metavar="SHARE",
        rich_help_panel=WATCH_PANEL,
        show_default=False,
    ),
]
_NAMES = ("watch", "interval", "count", "max_server_share")


def watchable(
    func: Callable[..., Any] | None = None, *, not_with: dict[str, str] | None = None
) -> Any:
    """Add ``--watch``, ``--interval`` and ``--count`` to a command function
    ``func(rt, **own)`` (put it under ``@pelctl_command``). ``not_with`` maps own parameter
    names to the option they come from, refused together with ``--watch`` when truthy."""
    if func is None:
        return functools.partial(watchable, not_with=not_with)
    refused = not_with or {}
    sig = inspect.signature(func, eval_str=True)
    extra = [
        inspect.Parameter(
            "watch", inspect.Parameter.KEYWORD_ONLY, annotation=WatchOpt, default=False
        ),
        inspect.Parameter(
            "interval",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=IntervalOpt,
            default=DEFAULT_INTERVAL,
        ),
        inspect.Parameter(
            "count", inspect.Parameter.KEYWORD_ONLY, annotation=CountOpt, default=None
        ),
        inspect.Parameter(
            "max_server_share",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=MaxShareOpt,
            default=None,
        ),
    ]

    @functools.wraps(func)
    def wrapper(rt: Any, **kwargs: Any) -> Any:
        watch, interval, count, share = (kwargs.pop(name) for name in _NAMES)
        if not watch:
            if count is not None or interval != DEFAULT_INTERVAL or share is not None:
                _usage(
                    "--interval, --count and --max-server-share go with --watch",
                    hint="add --watch",
                )
            return func(rt, **kwargs)
        if share is not None:
            rt.options["max_server_share"] = share  # flag > env > context > default
        for name, option in refused.items():
            if kwargs.get(name):
                _usage(
                    f"{option} and --watch exclude each other",
                    hint=f"--watch runs it every --interval; drop {option}",
                )
        return run(rt, lambda: func(rt, **kwargs), interval, count)

    del wrapper.__wrapped__
    # inspect.signature() reads __signature__ on any function; typeshed's Callable has none.
    wrapper.__signature__ = sig.replace(parameters=[*sig.parameters.values(), *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**func.__annotations__, **{p.name: p.annotation for p in extra}}
    return wrapper


def _usage(message: str, hint: str | None = None) -> None:
    from pelctl.base.errors import UsageError

    raise UsageError(message, hint=hint)


# -- the loop -------------------------------------------------------------------------------


def run(rt: Any, frame: Callable[[], Any], interval: str, count: int | None) -> int:
    """Run ``frame`` every ``interval`` until Ctrl-C or ``count`` frames; returns the exit
    code."""
    from pelctl.base.durations import parse_duration_ms
    from pelctl.core.budget import Budget
    from pelctl.redis.meter import metering

    interval_s = parse_duration_ms(interval) / 1000.0
    if interval_s < MIN_INTERVAL_S:
        _usage(f"--interval {interval} is too short for --watch", hint="at least 100ms")
    budget = rt.budget = Budget(rt.settings().max_server_share, interval_s=interval_s)
    meter = budget.meter
    view: _View = _Screen(interval, rt.command) if sys.stdout.isatty() else _Appender(rt.out)
    n = failures = 0
    code = 0
    spaced = False  # said once on stderr: frames spaced out to stay within the share
    try:
        while True:
            n += 1
            started = time.monotonic()
            at = time.time()
            spent0, parts0 = meter.server_ms, budget.parts_ms
            with metering(meter), meter.timed(round_trips=1, key="frame"):
                out, err, error = _capture(frame)
            conn = rt.connection
            if meter.latency_ms is None and conn is not None and error is None:
                with contextlib.suppress(Exception):
                    meter.measure_latency(conn.client)
            if error is None:
                failures = code = 0
                # What the frame's own reads cost (not its sampled PEL walks) sets how soon
                # the next frame may start.
                cheap_ms = (meter.server_ms - spent0) - (budget.parts_ms - parts0)
                gap = max(interval_s, budget.spacing_s(cheap_ms))
                wait = max(0.0, gap - (time.monotonic() - started))
                status = _status(budget, gap if gap > interval_s + 1e-3 else None)
                if gap > interval_s + 1e-3 and not spaced:
                    spaced = True
                    err += (
                        f"note: a frame costs the server about {cheap_ms:.0f}ms: frames are "
                        f"{gap:.1f}s apart to stay within --max-server-share "
                        f"{_share(budget.max_share)} (docs/server-budget.md)\n"
                    )
                view.frame(n, at, out, err, status, budget.used_share())
            else:
                if _fatal(error, first=n == 1):
                    raise error
                failures += 1
                wait = min(max(interval_s, MAX_BACKOFF_S), interval_s * 2 ** min(failures, 20))
                code, lines = _report(error, rt)
                view.failed(n, at, lines, wait)
                rt.close()  # the next frame connects again
            if count is not None and n >= count:
                return code
            time.sleep(wait)
    except KeyboardInterrupt:
        view.stop()
        return 0


def _share(value: float) -> str:
    from pelctl.base.shares import format_share

    return format_share(value)


def _status(budget: Any, spaced_s: float | None) -> str:
    """The header's note: the share of the server's time used so far, and the spacing of
    the frames when the budget stretches it."""
    from pelctl.render.budget import share_note

    text = share_note(budget.used_share(), budget.max_share)
    if spaced_s is not None:
        text += f", frames {spaced_s:.1f}s apart"
    return text


def _capture(frame: Callable[[], Any]) -> tuple[str, str, BaseException | None]:
    """One frame's stdout and stderr, and what it raised (KeyboardInterrupt goes on)."""
    out, err = _Buffer(sys.stdout), _Buffer(sys.stderr)
    error: BaseException | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result = frame()
            if isinstance(result, int) and result:
                raise typer.Exit(result)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - judged by the caller
            error = e
    return out.getvalue(), err.getvalue(), error


class _Buffer(io.StringIO):
    """A frame's output: a terminal to rich (colours, width) when the real stream is one."""

    def __init__(self, real: Any) -> None:
        super().__init__()
        self._tty = bool(getattr(real, "isatty", lambda: False)())

    # typeshed declares ``encoding`` a writable attribute; at run time it is read-only.
    @property
    def encoding(self) -> str:  # type: ignore[override]  # stubs: see above
        return "utf-8"

    def isatty(self) -> bool:
        return self._tty


def _fatal(error: BaseException, first: bool) -> bool:
    """Errors that retrying cannot fix end the watch. On the first frame also those that
    say the command is wrong (a typo in a name, credentials, permissions); later, a stream
    deleted or an outage is shown and retried."""
    from pelctl.base.errors import (
        AuthFailed,
        NeedsServerVersion,
        NotFound,
        PelctlError,
        PermissionDenied,
        UsageError,
    )
    from pelctl.cli.failures import typed_error

    if isinstance(error, (typer.Exit, SystemExit, GeneratorExit)):
        return True
    typed = typed_error(error) if not isinstance(error, PelctlError) else error
    if isinstance(typed, (UsageError, NeedsServerVersion)):
        return True
    if not isinstance(typed, PelctlError):
        return first  # a bug: said once, not retried forever from the start
    return first and isinstance(typed, (NotFound, AuthFailed, PermissionDenied))


def _report(error: BaseException, rt: Any) -> tuple[int, list[str]]:
    """The error's exit code and its ``error:``/``hint:`` lines (the traceback with -v)."""
    from pelctl.cli.failures import report_error

    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        code = report_error(error, rt, rt.verbose)
    return code, buf.getvalue().splitlines()


def _utc(at: float) -> str:
    millis = int(at * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{millis:03d}Z"


class _View:
    def frame(
        self, n: int, at: float, out: str, err: str, status: str = "", share: float = 0.0
    ) -> None:
        raise NotImplementedError

    def failed(self, n: int, at: float, lines: list[str], retry_s: float) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        pass


class _Appender(_View):
    """Frames appended in a pipe, each framed as its format says (``Output.frame``)."""

    def __init__(self, out: Any) -> None:  # pelctl.cli.output.Output
        self.out = out
        self._last_err = ""

    def frame(
        self, n: int, at: float, out: str, err: str, status: str = "", share: float = 0.0
    ) -> None:
        self.out.frame(n, _utc(at), out, server_share=share)
        sys.stdout.flush()
        if err and err != self._last_err:  # a warning said again each frame: once
            sys.stderr.write(err)
        self._last_err = err

    def failed(self, n: int, at: float, lines: list[str], retry_s: float) -> None:
        message = next(
            (ln[len("error: ") :] for ln in lines if ln.startswith("error: ")),
            lines[0] if lines else "failed",
        )
        self.out.frame_failed(n, _utc(at), message, retry_s)
        sys.stdout.flush()
        for line in lines:
            sys.stderr.write(line + "\n")
        sys.stderr.write(f"retrying in {retry_s:.1f}s (frame {n})\n")
        self._last_err = ""


class _Screen(_View):
    """Frames redrawn in place on a terminal."""

    def __init__(self, interval: str, command: str) -> None:
        self.interval = interval
        self.command = command
        self._last: list[str] = []

    def _header(self, n: int, at: float, note: str = "", status: str = "") -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))
        left = f"Every {self.interval}: pelctl {self.command} (frame {n}){note}"
        if status:
            left += f" · {status}"
        width = shutil.get_terminal_size().columns
        gap = max(2, width - len(left) - len(when))
        return f"\x1b[2m{left}{' ' * gap}{when}\x1b[0m"

    def _draw(self, lines: list[str]) -> None:
        height = max(3, shutil.get_terminal_size().lines)
        if len(lines) > height - 1:  # the last line's newline would scroll the header away
            hidden = len(lines) - (height - 2)
            lines = lines[: height - 2] + [
                f"\x1b[2m… {hidden} more lines (a taller terminal shows them, or -o plain "
                "in a pipe)\x1b[0m"
            ]
        sys.stdout.write("\x1b[H" + "".join(f"{line}\x1b[K\n" for line in lines) + "\x1b[J")
        sys.stdout.flush()

    def frame(
        self, n: int, at: float, out: str, err: str, status: str = "", share: float = 0.0
    ) -> None:
        body = out.splitlines()
        notes = [f"\x1b[2m{line}\x1b[0m" for line in err.splitlines()]
        self._last = body
        header = self._header(n, at, status=status)
        self._draw([header, "", *body, *([""] + notes if notes else [])])

    def failed(self, n: int, at: float, lines: list[str], retry_s: float) -> None:
        shown = [f"\x1b[31m{line}\x1b[0m" for line in lines]
        retry = f"\x1b[2mretrying in {retry_s:.1f}s; the last frame that worked:\x1b[0m"
        self._draw([self._header(n, at, " failed"), "", *shown, retry, "", *self._last])
