"""The loops of references 001 and 002, and a process of their own for each.

``python -m benchmarks.refs ref001|ref002 URL STREAM GROUP`` runs one loop in a process that
imports redis-py only, like the worker scripts they stand for, and prints how many entries
it requeued: the startup case times it from the process start to its exit against
``pelctl requeue``. benchmarks/cases/requeue.py runs the same functions in-process.
"""

from __future__ import annotations

import sys
from typing import Any

THRESHOLD_MS = 2_700_000  # the idle entries look idle for an hour; the rest for seconds


def ref001(r: Any, stream: bytes, group: bytes) -> int:  # a raw redis.Redis
    """Reference 001's sidecar recovery worker: an ``XAUTOCLAIM`` cursor loop, ``COUNT 10``
    (its ``BATCH_SIZE``) into ``recovery-worker-01``, each claimed batch requeued (XADD the
    same fields, XACK) in one pipeline, like ``Promise.allSettled``."""
    cursor = b"0-0"
    done = 0
    while True:
        reply = r.execute_command(
            "XAUTOCLAIM", stream, group, "recovery-worker-01", THRESHOLD_MS, cursor, "COUNT", 10
        )
        cursor, messages = reply[0], reply[1]
        live = [msg for msg in messages if msg and msg[1] is not None]
        if live:
            pipe = r.pipeline(transaction=False)
            for entry_id, flat in live:
                pipe.execute_command("XADD", stream, "*", *flat)
                pipe.execute_command("XACK", stream, group, entry_id)
            pipe.execute()
            done += len(live)
        if cursor in (b"0-0", "0-0"):
            return done


def ref002(r: Any, stream: bytes, group: bytes) -> int:  # a raw redis.Redis
    """Reference 002's periodic scan (the RFC): ``XPENDING IDLE - + 50`` (its ``BatchSize``)
    from the start of the PEL, then per message one round trip each: ``EXISTS`` of
    ``lock:{stream}:<id>``, ``XACK``, ``XRANGE id id``, ``XADD`` with ``_retry_count``;
    repeated until nothing idle is left."""
    done = 0
    while True:
        pending = r.execute_command("XPENDING", stream, group, "IDLE", THRESHOLD_MS, "-", "+", 50)
        if not pending:
            return done
        for row in pending:
            msg_id = row[0]
            if r.execute_command("EXISTS", b"lock:{" + stream + b"}:" + msg_id) == 1:
                continue
            if r.execute_command("XACK", stream, group, msg_id) == 0:
                continue
            msgs = r.execute_command("XRANGE", stream, msg_id, msg_id)
            if not msgs:
                continue
            flat = list(msgs[0][1])
            values = dict(zip(flat[0::2], flat[1::2], strict=True))
            values[b"_retry_count"] = str(int(values.get(b"_retry_count", b"0")) + 1).encode()
            r.execute_command("XADD", stream, "*", *[x for kv in values.items() for x in kv])
            done += 1


def main(argv: list[str]) -> int:
    import redis
    from redis.client import CaseInsensitiveDict

    name, url, stream, group = argv
    client = redis.Redis.from_url(url, protocol=2)
    client.response_callbacks = CaseInsensitiveDict({})  # raw RESP2 replies, as in-process
    loop = {"ref001": ref001, "ref002": ref002}[name]
    print(loop(client, stream.encode(), group.encode()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
