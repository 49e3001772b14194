"""A recorded data source: the demo incident read once from a real server by the real
:class:`RedisSource`, saved as JSON, and replayed with the same interface (dolphie's habit).

Snapshot tests render from it with a fixed clock, so their SVGs do not change with the time
of day or the speed of the machine. ``test_recording_matches_the_live_demo`` keeps the
recording honest: it checks the recording against a fresh demo on a real server.

Regenerate after changing the demo or the snapshot types::

    .venv/bin/python -m tests.tui.recorded tests/tui/data/demo.json
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from pelctl.base.binary import escape, unescape
from pelctl.core.aggregate import IdleHistogram, PelAggregate
from pelctl.core.dlq.envelope import DlqEntry
from pelctl.core.models import ConsumerInfo, PendingEntry, PendingFilter, StreamSummary
from pelctl.render.table import Column
from pelctl.tui.actions import ActionOutcome, ActionPlan, ActionRequest
from pelctl.tui.source import (
    DlqSnapshot,
    EntrySnapshot,
    GroupChoice,
    GroupSnapshot,
    StreamRow,
    StreamsSnapshot,
)

DATA = Path(__file__).parent / "data" / "demo.json"
# 2025-01-01T03:12:09Z: the recording's "now" (snapshots show it as "updated 03:12:09").
FIXED_NOW = 1735701129.0

TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        StreamsSnapshot,
        StreamRow,
        StreamSummary,
        GroupChoice,
        GroupSnapshot,
        ConsumerInfo,
        PelAggregate,
        PendingFilter,
        IdleHistogram,
        PendingEntry,
        DlqSnapshot,
        DlqEntry,
        EntrySnapshot,
        ActionPlan,
        ActionRequest,
        ActionOutcome,
        Column,
    )
}
FILTERS = {
    "all": PendingFilter(),
    "poison": PendingFilter(min_deliveries=5),
    "billing-2 idle>=1h": PendingFilter(consumer=b"billing-2", min_idle_ms=3_600_000),
}


def encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"__type__": type(value).__name__}
        for f in dataclasses.fields(value):
            if f.name == "handle":
                continue
            out[f.name] = encode(getattr(value, f.name))
        return out
    if isinstance(value, bytes):
        return {"b": escape(value)}
    if isinstance(value, tuple):
        return {"t": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"d": [[encode(k), encode(v)] for k, v in value.items()]}
    return value


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__type__" in value:
        cls = TYPES[value["__type__"]]
        return cls(**{k: decode(v) for k, v in value.items() if k != "__type__"})
    if "b" in value:
        return unescape(value["b"])
    if "t" in value:
        return tuple(decode(v) for v in value["t"])
    if "d" in value:
        return {decode(k): decode(v) for k, v in value["d"]}
    raise ValueError(f"cannot decode {value!r}")


def filter_key(filters: PendingFilter) -> str:
    for name, f in FILTERS.items():
        if f == filters:
            return name
    raise KeyError(f"no recording for filter {filters!r}")


class RecordedSource:
    """Replays a recording through the :class:`pelctl.tui.source.DataSource` interface."""

    def __init__(self, recording: dict[str, Any], *, read_only: bool = False) -> None:
        self.data = recording
        self.read_only = read_only
        self.server = recording["server"]
        self.calls: list[str] = []

    @classmethod
    def load(cls, path: Path = DATA, **kwargs: Any) -> RecordedSource:
        return cls(decode(json.loads(path.read_text())), **kwargs)

    def streams(self) -> StreamsSnapshot:
        self.calls.append("streams")
        return self.data["streams"]

    def groups(self, stream: bytes) -> tuple[GroupChoice, ...]:
        return self.data["groups"][stream]

    def group(
        self,
        stream: bytes,
        group: bytes,
        filters: PendingFilter,
        *,
        top_n: int = 200,
        progress: Any = None,
        should_stop: Any = None,
        force: bool = False,
    ) -> GroupSnapshot:
        self.calls.append(f"group {escape(stream)} {escape(group)} {filter_key(filters)}")
        snap: GroupSnapshot = self.data["group"][(stream, group, filter_key(filters))]
        agg = dataclasses.replace(snap.aggregate, top=snap.aggregate.top[:top_n], top_n=top_n)
        return dataclasses.replace(snap, aggregate=agg)

    def dlq(self, key: bytes, *, limit: int = 500) -> DlqSnapshot:
        return self.data["dlq"][key]

    def entry(self, stream: bytes, group: bytes, entry_id: bytes) -> EntrySnapshot:
        """The entry view's read (``d``/``v``): recorded for every entry the group
        snapshots show."""
        from pelctl.base.errors import OperationFailed

        self.calls.append(f"entry {escape(stream)} {escape(group)} {escape(entry_id)}")
        try:
            return self.data["entries"][(stream, group, entry_id)]
        except KeyError:
            raise OperationFailed(f"entry {escape(entry_id)} is not in the recording") from None

    def plan(self, request: ActionRequest) -> ActionPlan:
        recorded: ActionPlan = self.data["plans"][request.action]
        return dataclasses.replace(recorded, request=request)

    def apply(self, plan: ActionPlan) -> ActionOutcome:
        raise AssertionError("a recorded source never applies anything")

    def close(self) -> None:
        pass


# -- recording --------------------------------------------------------------------------------


def record(url: str) -> dict[str, Any]:
    """Read the demo on ``url`` through the real RedisSource; times moved to FIXED_NOW."""
    from pelctl.redis.settings import ConnectionSettings
    from pelctl.tui.source import RedisSource

    source = RedisSource.connect(ConnectionSettings(url=url))
    try:
        streams = source.streams()
        shift = streams.taken_at - FIXED_NOW
        data: dict[str, Any] = {
            "server": "redis://127.0.0.1:6379/0 (redis 7.0.15)",
            "streams": dataclasses.replace(streams, taken_at=FIXED_NOW),
            "groups": {},
            "group": {},
            "dlq": {},
            "plans": {},
        }
        for row in streams.rows:
            if not row.summary.is_dlq:
                data["groups"][row.name] = source.groups(row.name)
        for name, f in FILTERS.items():
            snap = source.group(b"orders", b"billing", f, top_n=60)
            data["group"][(b"orders", b"billing", name)] = dataclasses.replace(
                snap, taken_at=FIXED_NOW
            )
        for key in (b"orders:dlq", b"{payments}:dlq"):
            snap = source.dlq(key)
            entries = tuple(
                dataclasses.replace(e, at_ms=e.at_ms - int(shift * 1000) if e.at_ms else None)
                for e in snap.entries
            )
            data["dlq"][key] = dataclasses.replace(snap, entries=entries, taken_at=FIXED_NOW)
        data["entries"] = {}
        for name in FILTERS:
            for e in data["group"][(b"orders", b"billing", name)].aggregate.top:
                key = (b"orders", b"billing", e.id)
                if key not in data["entries"]:
                    snap = source.entry(*key)
                    data["entries"][key] = dataclasses.replace(snap, taken_at=FIXED_NOW)
        top = data["group"][(b"orders", b"billing", "all")].aggregate.top
        request = ActionRequest("requeue", b"orders", b"billing", ids=(top[0].id, top[1].id))
        plan = source.plan(request)  # its question names the server: the recorded one
        title = plan.title.replace(url, "redis://127.0.0.1:6379/0")
        data["plans"]["requeue"] = dataclasses.replace(plan, title=title)
        return data
    finally:
        source.close()


def main(out: str) -> None:
    import os
    import tempfile

    from pelctl.demo.server import seed
    from tests.conftest import start_redis

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="pelctl-record-")
    server = start_redis()
    try:
        seed(server.client())
        time.sleep(0.2)  # not a test wait: the recording's "live" consumers idle a moment
        data = record(server.url)
    finally:
        server.stop()
    encoded = encode(data)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(encoded, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"recorded {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(DATA))
