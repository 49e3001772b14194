"""Log lines of the reclaim loop: one JSON object a line (``--log-format json``) or text.

Built on :mod:`logging` (logger ``pelctl.reclaim``; the library uses ``pelctl.consumer``), so
an embedding application can route them its own way. Every line is one *event* with fields::

    {"ts": "2025-01-01T03:12:09.123Z", "level": "info", "logger": "pelctl.reclaim",
     "event": "pass", "stream": "orders", "group": "billing", "requeued": 3, ...}

Secrets are redacted from every value (Redis URLs and the known password), whatever the
format. Use :func:`event` to emit: ``event(log, logging.INFO, "pass", stream="orders")``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import IO, Any

LOGGER = "pelctl.reclaim"
FORMATS = ("json", "text")


def event(logger: logging.Logger, level: int, name: str, **fields: Any) -> None:
    """Log event ``name`` with structured ``fields`` (kept apart from the message)."""
    if logger.isEnabledFor(level):
        logger.log(level, name, extra={"pelctl_fields": fields})


def _timestamp(created: float) -> str:
    millis = int(created * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{millis:03d}Z"


class _Redacting(logging.Formatter):
    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.secrets = secrets

    def _clean(self, value: Any) -> Any:
        from pelctl.base.binary import clean
        from pelctl.redis.url import redact_text

        if isinstance(value, str):
            # Error texts can echo names: no control character reaches a log line.
            return clean(redact_text(value, self.secrets))
        if isinstance(value, bytes):
            from pelctl.base.binary import escape

            return redact_text(escape(value), self.secrets)
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._clean(v) for v in value]
        return value

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        fields = dict(getattr(record, "pelctl_fields", {}) or {})
        if record.exc_info and record.exc_info[1] is not None:
            err = record.exc_info[1]
            fields.setdefault("error", f"{type(err).__name__}: {err}")
        return {k: self._clean(v) for k, v in fields.items()}


class JsonFormatter(_Redacting):
    def format(self, record: logging.LogRecord) -> str:

        line: dict[str, Any] = {
            "ts": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": self._clean(record.getMessage()),
        }
        for key, value in self.fields(record).items():
            line.setdefault(key, value)
        return json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)


class TextFormatter(_Redacting):
    def format(self, record: logging.LogRecord) -> str:

        parts = [
            _timestamp(record.created),
            f"{record.levelname:<7}",
            self._clean(record.getMessage()),
        ]
        for key, value in self.fields(record).items():
            if value is None:
                continue
            text = (
                json.dumps(value, ensure_ascii=False, default=str)
                if not isinstance(value, (int, float))
                else str(value)
            )
            if isinstance(value, str) and value and " " not in value and '"' not in value:
                text = value
            parts.append(f"{key}={text}")
        return " ".join(parts)


class _Handler(logging.StreamHandler[IO[str]]):
    """pelctl's own handler: a later setup() or teardown() replaces only these."""

    _pelctl = True


def setup(
    fmt: str | None = None,
    *,
    verbose: int = 0,
    secrets: tuple[str, ...] = (),
    stream: IO[str] | None = None,
    name: str = LOGGER,
) -> logging.Logger:
    """Configure logger ``name`` to write ``fmt`` lines to ``stream`` (stderr).

    ``fmt`` None: text on a terminal, JSON otherwise (what a log collector wants).
    ``verbose`` 1+: debug lines too (one per settled batch and one per quiet pass).
    """
    out = stream or sys.stderr
    if fmt is None:
        fmt = "text" if getattr(out, "isatty", lambda: False)() else "json"
    logger = logging.getLogger(name)
    for old in list(logger.handlers):
        if getattr(old, "_pelctl", False):
            logger.removeHandler(old)
    handler = _Handler(out)
    handler.setFormatter(JsonFormatter(secrets) if fmt == "json" else TextFormatter(secrets))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    return logger


def teardown(name: str = LOGGER) -> None:
    logger = logging.getLogger(name)
    for old in list(logger.handlers):
        if getattr(old, "_pelctl", False):
            logger.removeHandler(old)
            old.flush()
