"""Running an entry script over a plan's items (:class:`EntryRun`: batches, lock keys,
pipelining, the byte budget's ``NEXT_CALL``, lost connections, Ctrl-C) and reading its replies
(:func:`simple_parse`; :class:`OrderedLeftovers` collects what is left for the ordered path).

Batches and rounds are sized by a :class:`pelctl.redis.scripts.Pacer`: what is on the wire
at once stays under the stall bound (10 ms of server time, aiming at 3), so another client's
command never waits long behind a repair (docs/server-budget.md).

Per-entry verification, in every entry script (``verify_entry`` in
``pelctl/redis/lua/_prelude.lua``): the entry is still pending, its owner and delivery count
are those the plan saw (a consumer that re-read it since increments the count), it is idle
at least as long as when planned (and at least the ``--idle`` threshold), and its lock key
(if any) is not held. A claim then takes the entry with an ``XCLAIM`` with that min-idle; a
requeue and a dead-letter move copy and acknowledge it in the same script with no take
(nothing runs between the check and the change). Either way an entry re-delivered since the
plan is skipped and counted, never stolen.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace

import redis.exceptions as rex

from pelctl.base.collector import gc_paused
from pelctl.core.mutations import APPLIED, ItemResult, Plan, PlanItem, Progress
from pelctl.core.repairs.select import lock_for
from pelctl.core.script_calls import NEXT_CALL, fatal, pairs, text
from pelctl.redis.connection import Connection
from pelctl.redis.scripts import (
    DEFAULT_BATCH,
    DEFAULT_MAX_STALL_MS,
    LUA_UNPACK_MAX,
    Call,
    Pacer,
    Script,
    Wire,
    pack,
    same_slot,
)

# One call of a round, waiting for its answer: (its items, the call or None when every
# item was settled before sending, the results settled before sending).
_Sent = tuple[Sequence[PlanItem], Call | None, dict[bytes, ItemResult]]


class _Staged:
    """A round built, and packed, while the one before runs on the server; sent the moment
    that one is answered."""

    __slots__ = ("calls", "packed")

    def __init__(self, calls: list[_Sent]) -> None:
        self.calls = calls
        sent = [c for _, c, _ in calls if c is not None]
        self.packed = pack(sent) if sent else None

    def send(self, wire: Wire, pacer: Pacer) -> list[_Sent]:
        """Put the round on the wire and return what went. It is alone on the server, so
        its round trip measures its cost (an upper bound: the client parses the last
        round's answers meanwhile, and reads these only then; the pacer keeps the median of
        several). When what the pacer learnt since it was built makes it cost more than a
        round may, only the calls that fit go; the rest stays here to go next
        (``self.calls`` is empty once all went)."""
        # (Sent before it leaves self.calls: if sending fails, the caller still holds the
        # whole round, said as unknown.)
        sent = [c for _, c, _ in self.calls if c is not None]
        n = pacer.fit(sent) if sent else 0
        if n == len(sent):
            if self.packed is not None:
                wire.send(sent, alone=True, packed=self.packed)
            calls, self.calls = self.calls, []
            return calls
        cut = [i for i, (_, call, _) in enumerate(self.calls) if call is not None][n]
        wire.send(sent[:n], alone=True)
        calls, self.calls = self.calls[:cut], self.calls[cut:]
        self.packed = pack([c for _, c, _ in self.calls if c is not None])
        return calls


def _send(wire: Wire, calls: list[_Sent]) -> None:
    sent = [c for _, c, _ in calls if c is not None]
    if sent:
        wire.send(sent)


def _answers(
    wire: Wire, pacer: Pacer, out: deque[list[_Sent]], staged: _Staged | None
) -> tuple[Iterator[object], _Staged | None]:
    """The answers of the oldest round out; the round built ahead goes on the wire the moment
    they start to arrive, to run while they are read and parsed. Returns the answers and what
    is still built ahead."""
    waits = any(c for _, c, _ in out[0])
    if staged is not None:
        if waits:
            wire.answering()  # (sent before the answers are read: the server starts it sooner)
        out.append(staged.send(wire, pacer))
        if not staged.calls:
            staged = None
    return iter(wire.receive() if waits else []), staged


def _with(out: deque[list[_Sent]], staged: _Staged | None) -> deque[list[_Sent]]:
    """The rounds out and the one built ahead: on a lost connection or an interrupt, a round
    built but not sent is said as unknown with the rest (the safe side)."""
    if staged is not None:
        out.append(staged.calls)
    return out


class _Todo:
    """Items still to send, from ``pos`` on; ``fixed``: the size of their calls (entries a
    call left for later go again in calls of the size it managed), else the pacer's."""

    __slots__ = ("items", "pos", "fixed")

    def __init__(self, items: Sequence[PlanItem], fixed: int | None = None) -> None:
        self.items = items
        self.pos = 0
        self.fixed = fixed

    def rest(self) -> Sequence[PlanItem]:
        return self.items[self.pos :]


class EntryRun:
    """Runs one entry script over a plan's items: batches, lock keys, pipelining, failures."""

    def __init__(
        self,
        conn: Connection,
        plan: Plan,
        progress: Progress | None,
        batch_size: int | None,
        total: int,
        *,
        max_stall_ms: float = DEFAULT_MAX_STALL_MS,
    ) -> None:
        self.conn = conn
        self.plan = plan
        self.stream = plan.stream
        self.client = conn.raw(plan.stream)
        self.progress = progress
        self.batch = batch_size or DEFAULT_BATCH  # entries per call, at most
        self.pacer = Pacer(max_stall_ms, max_batch=self.batch)
        self.threshold = plan.targets.min_idle_ms or 0
        self.lock_of = lock_for((plan.options.lock_key, plan.stream, plan.group))
        self.results: list[ItemResult] = []
        self.done = 0
        self.total = total
        self.interrupted = False
        self.answered = False  # a round was answered (the script is known to the server)

    def min_idle(self, item: PlanItem) -> int:
        return max(self.threshold, item.idle_ms)

    def entry_args(
        self, items: Sequence[PlanItem], keys: list[bytes], pre: dict[bytes, ItemResult]
    ) -> list[object]:
        """The five per-entry arguments; lock keys join ``keys`` (or are checked here)."""
        args: list[object] = []
        if not self.plan.options.lock_key:  # no lock keys: the five arguments, nothing else
            threshold = self.threshold
            for item in items:
                idle = item.idle_ms if item.idle_ms > threshold else threshold
                args += (item.id, item.owner, item.deliveries, idle, 0)
            return args
        for item in items:
            key = self.lock_of(item.id, item.owner)
            index = 0
            if key is not None:
                if self.conn.is_cluster and not same_slot(key, self.stream):
                    # Another slot: checked just before the batch (a script cannot see it).
                    if self.conn.client.exists(key):
                        pre[item.id] = ItemResult(item.id, "alive")
                        continue
                else:
                    keys.append(key)
                    index = len(keys)
            args += [item.id, item.owner, item.deliveries, self.min_idle(item), index]
        return args

    def calls(
        self, lua: Script, keys: Sequence[bytes], header: Sequence[object]
    ) -> Callable[[Sequence[PlanItem], dict[bytes, ItemResult]], Call | None]:
        """``make_call`` for :meth:`run`: one call of ``lua`` per batch, on ``keys`` (lock keys
        join them), its ``header`` arguments, then the five of each entry."""

        def make_call(chunk: Sequence[PlanItem], pre: dict[bytes, ItemResult]) -> Call | None:
            batch_keys = list(keys)
            args = self.entry_args(chunk, batch_keys, pre)
            return Call(lua, tuple(batch_keys), (*header, *args)) if args else None

        return make_call

    def run(
        self,
        items: Sequence[PlanItem],
        make_call: Callable[[Sequence[PlanItem], dict[bytes, ItemResult]], Call | None],
        parse: Callable[[Sequence[PlanItem], object], list[ItemResult]],
    ) -> None:
        """Send ``items`` in calls (``make_call``), rounds of them on one connection, the next
        round on the wire while the answers of the last one are read (:class:`Wire`): the
        server runs scripts while Python builds and parses. Calls and rounds are as big as
        the stall bound allows (the pacer: small at first, then sized from the measured
        cost of the script)."""
        # Items still to send: [items, position of the next one, fixed call size or None].
        todo: deque[_Todo] = deque()
        if items:
            todo.append(_Todo(items))
        out: deque[list[_Sent]] = deque()
        # Under a stall bound the next round is built (and packed) while one runs but sent
        # only once that one is answered: the server never holds two rounds of ours at once,
        # so another client waits at most one round (rounds sent back to back queue up on the
        # server and are served before anyone else).
        staged: _Staged | None = None
        pacer = self.pacer
        script: Script | None = None  # known from the first call
        bounded = math.isfinite(pacer.max_stall_ms)  # (no bound: nothing to measure for)
        alone_out = False  # a round sent alone is out: nothing goes with it
        try:
            # (No reference cycles among the rounds' lists and results: the cyclic collector's
            # passes over a CLI's whole heap would cost a quarter of this loop's CPU.)
            with gc_paused(), Wire(self.client, pacer) as wire:
                wire.latency()
                while True:
                    # Two rounds at most: one out and one built ahead (without a bound: both
                    # out). The first goes alone (nothing else built until it is answered: a
                    # script the server does not know yet is loaded once, not twice).
                    while todo and not alone_out and len(out) + (staged is not None) < 2:
                        if not self.answered:
                            alone_out = True
                        calls, script = self._round(todo, make_call, script)
                        if out and bounded:
                            staged = _Staged(calls)
                        else:
                            out.append(calls)
                            _send(wire, calls)
                    if not out:
                        break
                    calls = out[0]  # still out until parsed (an interrupt counts it)
                    replies, staged = _answers(wire, pacer, out, staged)
                    self.answered = True
                    alone_out = False
                    self._parse(calls, replies, parse, todo)
                    out.popleft()
                    if self.progress:
                        self.progress(self.done, self.total)
        except (rex.ConnectionError, rex.TimeoutError, OSError) as err:
            self._lost(_with(out, staged), todo, err)
        except KeyboardInterrupt:
            self._stopped(_with(out, staged), todo)

    def _round(
        self,
        todo: deque[_Todo],
        make_call: Callable[[Sequence[PlanItem], dict[bytes, ItemResult]], Call | None],
        script: Script | None,
    ) -> tuple[list[_Sent], Script | None]:
        """The calls of one round, taken from the head of ``todo``: as many batches as the
        pacer's depth and round time allow (at least one). Returns them and the script (known
        from the first call made)."""
        pacer = self.pacer
        calls: list[_Sent] = []
        cost = 0.0
        while todo and len(calls) < pacer.max_depth:
            head = todo[0]
            n = head.fixed or pacer.batch(script, cap=self.batch)
            n = min(n, len(head.items) - head.pos)
            step = pacer.unit_ms(script) * n if script else pacer.round_ms
            if calls and cost + step > pacer.round_ms:
                break
            chunk = head.items[head.pos : head.pos + n]
            head.pos += n
            if head.pos >= len(head.items):
                todo.popleft()
            pre: dict[bytes, ItemResult] = {}
            call = make_call(chunk, pre)
            if call is not None:
                script = call.script
                call = replace(call, entries=len(chunk))
                cost += pacer.cost_ms(call)
            calls.append((chunk, call, pre))
        return calls, script

    def _lost(self, out: deque[list[_Sent]], todo: deque[_Todo], err: BaseException) -> None:
        """The connection was lost: what was out may or may not have run (``unknown``); what
        was not sent did not (``fail``)."""
        for calls in out:
            for chunk, _call, _pre in calls:
                self._fail(chunk, "unknown", f"connection lost mid-batch: {err}")
        for left in todo:
            self._fail(left.rest(), "fail", "not attempted: connection lost")

    def _stopped(self, out: deque[list[_Sent]], todo: deque[_Todo]) -> None:
        """Ctrl-C: what was out and not answered, and what was not sent, is ``interrupted``."""
        self.interrupted = True
        answered = {r.id for r in self.results}
        for calls in out:
            for chunk, _call, _pre in calls:
                self._interrupted(chunk, answered)
        for left in todo:
            self._interrupted(left.rest(), answered)

    def _parse(
        self,
        calls: list[_Sent],
        replies: Iterator[object],
        parse: Callable[[Sequence[PlanItem], object], list[ItemResult]],
        todo: deque[_Todo],
    ) -> None:
        """One round's answers into results; entries a call left ``later`` (its byte budget
        was spent: nothing was done for them) go again, in calls of the size it managed."""
        for chunk, call, pre in calls:
            sent_items = [it for it in chunk if it.id not in pre]
            self.results.extend(pre.values())
            if call is None:
                continue
            reply = next(replies)
            later: list[bytes] = []
            fatal(reply)
            if isinstance(reply, Exception):
                self._fail(sent_items, "fail", f"script error: {reply}")
            else:
                parsed = parse(sent_items, reply)
                later = [r.id for r in parsed if r.outcome == NEXT_CALL]
                self.results.extend(r for r in parsed if r.outcome != NEXT_CALL)
                if later:
                    ids = set(later)
                    again = [it for it in sent_items if it.id in ids]
                    todo.append(_Todo(again, fixed=max(1, len(sent_items) - len(ids))))
            self.done += len(chunk) - len(later)

    def _interrupted(self, chunk: Sequence[PlanItem], answered: set[bytes]) -> None:
        for item in chunk:
            if item.id not in answered:
                self.results.append(
                    ItemResult(item.id, "interrupted", "outcome unknown or not attempted")
                )

    def _fail(self, items: Iterable[PlanItem], outcome: str, text: str) -> None:
        for item in items:
            self.results.append(ItemResult(item.id, outcome, text))


def simple_parse(items: Sequence[PlanItem], reply: object) -> list[ItemResult]:
    out = []
    for item, status, detail in pairs(items, reply):
        if status == "skip":
            out.append(ItemResult(item.id, text(detail)))
        else:
            out.append(ItemResult(item.id, status, text(detail)))
    return out


class OrderedLeftovers:
    """Parses an entry script's reply; collects the entries it left for the ordered path:
    ``defer`` (a dead-letter stream in another slot) and ``wide`` (a copy too wide for one
    script: more than LUA_UNPACK_MAX XADD values). Nothing was written for either."""

    def __init__(self, by_id: dict[bytes, PlanItem]) -> None:
        self.by_id = by_id
        self.items: list[PlanItem] = []
        self.deferred: list[bytes] = []
        self.wide: dict[bytes, int] = {}  # id -> XADD values its copy needs

    def parse(self, items: Sequence[PlanItem], reply: object) -> list[ItemResult]:
        out = []
        for item, status, detail in pairs(items, reply):
            if status == "defer":
                self.deferred.append(item.id)
                self.items.append(self.by_id[item.id])
            elif status == "wide":
                self.wide[item.id] = int(text(detail) or 0)
                self.items.append(self.by_id[item.id])
            elif status == "skip":
                out.append(ItemResult(item.id, text(detail)))
            else:
                out.append(ItemResult(item.id, status, text(detail)))
        return out

    def not_attempted(self, results: Sequence[ItemResult]) -> list[ItemResult]:
        """After an interruption: the entries left for the ordered path were not touched."""
        answered = {r.id for r in results}
        return [
            ItemResult(i.id, "interrupted", "not attempted (left for the ordered path)")
            for i in self.items
            if i.id not in answered
        ]

    def notes(self, results: Sequence[ItemResult]) -> list[str]:
        if not self.wide:
            return []
        done = [r.id for r in results if r.id in self.wide and r.status == APPLIED]
        shown = ", ".join(text(i) for i in list(self.wide)[:5])
        more = f" and {len(self.wide) - 5:,} more" if len(self.wide) > 5 else ""
        return [
            f"{len(self.wide):,} entries too wide for one script ({shown}{more}: their copy needs "
            f"more than {LUA_UNPACK_MAX:,} XADD values) took the ordered path (copy first, then "
            f"a verified ack: a crash can duplicate, never lose); {len(done):,} applied"
        ]
