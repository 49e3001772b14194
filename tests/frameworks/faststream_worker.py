"""A FastStream worker: one consumer-group subscriber on a Redis stream, as users write them.

Run as its own process by tests/frameworks/harness.py (``python -m
tests.frameworks.faststream_worker``), configured by environment variables:

- ``FW_URL``, ``FW_STREAM``, ``FW_GROUP``, ``FW_CONSUMER``: what to consume, as whom;
- ``FW_JOURNAL``: the journal file (see journal.py) of this process;
- ``FW_GATE``: if set, wait until this file exists before connecting;
- ``FW_HOLD=1``: messages with the header ``x-hold: 1`` block the handler forever (after a
  ``holding`` record), so a SIGKILL leaves them in this consumer's PEL;
- ``FW_BODY``: how the handler takes the body: ``raw`` (no body parameter: the message
  object only, the default), ``lenient`` (a pydantic model that ignores unknown fields) or
  ``strict`` (the same model with ``extra="forbid"``). A handler that raises, or a body that
  fails validation, is journaled as ``failed`` (a broker middleware), and FastStream's
  default ack policy (reject on error) leaves the entry pending.

The subscriber is FastStream's plain ``StreamSub(stream, group=..., consumer=...)``: it reads
``XREADGROUP ... >`` and acks after the handler returns.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from faststream import BaseMiddleware, FastStream
from faststream.redis import RedisBroker, StreamSub
from faststream.redis.annotations import RedisStreamMessage
from pydantic import BaseModel, ConfigDict

from tests.frameworks import journal

URL = os.environ["FW_URL"]
STREAM = os.environ["FW_STREAM"]
GROUP = os.environ["FW_GROUP"]
CONSUMER = os.environ["FW_CONSUMER"]
JOURNAL = os.environ["FW_JOURNAL"]
HOLD = os.environ.get("FW_HOLD") == "1"
BODY = os.environ.get("FW_BODY", "raw")


class LenientOrder(BaseModel):
    order: str
    amount: int
    note: str


class StrictOrder(LenientOrder):
    model_config = ConfigDict(extra="forbid")


def _record(event: str, msg: Any, **extra: Any) -> None:
    raw = msg.raw_message
    journal.append(
        JOURNAL,
        {
            "event": event,
            "framework": "faststream",
            "worker": CONSUMER,
            "pid": os.getpid(),
            "stream": raw["channel"],
            "entry_id": raw["message_ids"][0].decode(),
            "fields": journal.hexed_fields(raw["data"]),
            "body": bytes(msg.body).hex(),
            "headers": dict(msg.headers),
            "correlation_id": msg.correlation_id,
            "message_id": msg.message_id,  # FastStream makes one up on receipt (none is sent)
            "key": msg.correlation_id,
            **extra,
        },
    )


class JournalFailures(BaseMiddleware):
    """Broker middleware: journal a handler (or body validation) failure, then re-raise."""

    async def consume_scope(self, call_next: Any, msg: Any) -> Any:
        try:
            return await call_next(msg)
        except Exception as exc:
            _record("failed", msg, error=type(exc).__name__, detail=str(exc)[:500])
            raise


broker = RedisBroker(URL, middlewares=[JournalFailures])
app = FastStream(broker)
sub = broker.subscriber(stream=StreamSub(STREAM, group=GROUP, consumer=CONSUMER))


async def _handle(msg: RedisStreamMessage, body: Any = None) -> None:
    if HOLD and msg.headers.get("x-hold") == "1":
        _record("holding", msg)
        await asyncio.Event().wait()  # until SIGKILL
    extra = {"decoded": body.model_dump()} if isinstance(body, BaseModel) else {}
    _record("processed", msg, **extra)


if BODY == "raw":

    @sub
    async def handle_raw(msg: RedisStreamMessage) -> None:
        await _handle(msg)

elif BODY == "lenient":

    @sub
    async def handle_lenient(body: LenientOrder, msg: RedisStreamMessage) -> None:
        await _handle(msg, body)

elif BODY == "strict":

    @sub
    async def handle_strict(body: StrictOrder, msg: RedisStreamMessage) -> None:
        await _handle(msg, body)

else:
    raise SystemExit(f"FW_BODY must be raw, lenient or strict, not {BODY!r}")


@app.after_startup
async def _ready() -> None:
    journal.append(
        JOURNAL,
        {"event": "ready", "framework": "faststream", "worker": CONSUMER, "pid": os.getpid()},
    )


if __name__ == "__main__":
    journal.wait_for_gate()
    asyncio.run(app.run())
