"""A taskiq app on taskiq-redis's stream broker, run by ``taskiq worker`` in the tests.

``python -m taskiq worker tests.frameworks.taskiq_worker:broker --workers 1`` (see
harness.py), configured by environment variables:

- ``FW_URL``, ``FW_STREAM``, ``FW_GROUP``, ``FW_CONSUMER``: the stream (taskiq's queue
  name), the consumer group and this worker's consumer name;
- ``FW_JOURNAL``: the journal file (see journal.py) of this worker;
- ``FW_GATE``: if set, the worker process waits (on import) until this file exists;
- ``FW_HOLD=1``: tasks kicked with ``hold=True`` block forever (after a ``holding`` record),
  so a SIGKILL leaves them in this consumer's PEL;
- ``FW_IDLE_TIMEOUT_MS``: the broker's ``idle_timeout`` (its own XAUTOCLAIM recovery;
  taskiq-redis's default, 10 minutes, when unset).

The broker is taskiq-redis's ``RedisStreamBroker`` unchanged, except that the ack callable
it hands to taskiq also carries the stream entry id (``_ack_generator`` returns an object
with the same behaviour), so the task can journal which entry it processed and its fields.
taskiq's default ack type (when saved, i.e. after the task ran) applies.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from redis.asyncio import Redis
from taskiq import Context, TaskiqDepends, TaskiqEvents, TaskiqState
from taskiq_redis import RedisStreamBroker

from tests.frameworks import journal

URL = os.environ.get("FW_URL", "redis://127.0.0.1:6379/0")
STREAM = os.environ.get("FW_STREAM", "taskiq")
GROUP = os.environ.get("FW_GROUP", "taskiq")
CONSUMER = os.environ.get("FW_CONSUMER") or None
JOURNAL = os.environ.get("FW_JOURNAL", "")
HOLD = os.environ.get("FW_HOLD") == "1"
IDLE_TIMEOUT_MS = int(os.environ.get("FW_IDLE_TIMEOUT_MS") or 600_000)
TASK_NAME = "pelctl_tests.work"

if JOURNAL:  # in a worker process, not when the tests import the task's name
    journal.wait_for_gate()


class _EntryAck:
    """taskiq-redis's ack for one entry, with the entry's id and stream kept visible."""

    def __init__(self, ack: Any, entry_id: Any, stream: Any) -> None:
        self._ack = ack
        self.entry_id = entry_id
        self.stream = stream

    def __call__(self) -> Any:
        return self._ack()


class JournaledStreamBroker(RedisStreamBroker):
    def _ack_generator(self, id: str, queue_name: str) -> Any:
        return _EntryAck(super()._ack_generator(id=id, queue_name=queue_name), id, queue_name)


broker = JournaledStreamBroker(
    URL,
    queue_name=STREAM,
    consumer_group_name=GROUP,
    consumer_name=CONSUMER,
    idle_timeout=IDLE_TIMEOUT_MS,
    xread_block=1000,
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def _record(event: str, context: Context, **extra: Any) -> None:
    controller = getattr(context, "_ack_controller", None)
    ack = getattr(controller, "_ack", None)
    entry_id = getattr(ack, "entry_id", None)
    stream = getattr(ack, "stream", None)
    fields: list[list[str]] = []
    if entry_id is not None:
        async with Redis.from_url(URL) as r:
            for _id, entry_fields in await r.xrange(stream, entry_id, entry_id):
                fields = journal.hexed_fields(entry_fields)
    msg = context.message
    journal.append(
        JOURNAL,
        {
            "event": event,
            "framework": "taskiq",
            "worker": broker.consumer_name,
            "pid": os.getpid(),
            "stream": None if stream is None else _text(stream),
            "entry_id": None if entry_id is None else _text(entry_id),
            "fields": fields,
            "task_id": msg.task_id,
            "task_name": msg.task_name,
            "args": msg.args,
            "kwargs": msg.kwargs,
            "labels": msg.labels,
            "key": msg.task_id,
            **extra,
        },
    )


@broker.task(task_name=TASK_NAME)
async def work(payload: Any, hold: bool = False, context: Context = TaskiqDepends()) -> None:
    if HOLD and hold:
        await _record("holding", context)
        await asyncio.Event().wait()  # until SIGKILL
    await _record("processed", context)


@broker.on_event(TaskiqEvents.WORKER_STARTUP)
async def _ready(state: TaskiqState) -> None:
    journal.append(
        JOURNAL,
        {
            "event": "ready",
            "framework": "taskiq",
            "worker": broker.consumer_name,
            "pid": os.getpid(),
        },
    )
