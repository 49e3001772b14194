"""Payloads as the frameworks write them, made by their own code (no server needed):
FastStream 0.7's binary frame (``BinaryMessageFormatV1.encode``) and taskiq-redis' ``data``
field (``json.dumps`` of ``TaskiqMessage.model_dump(mode="json")``, labels prepared by
taskiq). tests/frameworks publishes through the real brokers; these build the same bytes
for tests that only need an entry."""

from __future__ import annotations

import asyncio
import json
from typing import Any


def faststream_frame(
    body: Any,
    headers: dict[str, str] | None = None,
    correlation_id: str = "c-1",
    reply_to: str | None = None,
) -> bytes:
    from faststream.redis.parser import BinaryMessageFormatV1

    async def encode() -> bytes:
        return await BinaryMessageFormatV1.encode(
            message=body, reply_to=reply_to, headers=headers, correlation_id=correlation_id
        )

    return asyncio.run(encode())


def taskiq_data(
    task_name: str = "billing.charge",
    args: list[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
    labels: dict[str, Any] | None = None,
    task_id: str = "t-1",
) -> bytes:
    from taskiq.labels import prepare_label
    from taskiq.message import TaskiqMessage

    labels = {"trace": "x", "attempt": 2, "urgent": True} if labels is None else labels
    prepared = {k: prepare_label(v) for k, v in labels.items()}
    msg = TaskiqMessage(
        task_id=task_id,
        task_name=task_name,
        labels={k: v[0] for k, v in prepared.items()},
        labels_types={k: v[1] for k, v in prepared.items()},
        args=[7, {"order": "o-1", "note": "crème"}] if args is None else args,
        kwargs={"hold": False} if kwargs is None else kwargs,
    )
    return json.dumps(msg.model_dump(mode="json")).encode()
