"""The group view's keys: back, filters, marks, the entry and trace views, the dead-letter
view, and the operator actions (claim, requeue, ack, move to the DLQ, prune a consumer) on
the marked entries, the filter's matches or the row under the cursor. The panels and the
data they refresh are :class:`pelctl.tui.screens.group_view.GroupView`'s."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypedDict, Unpack

from textual.binding import Binding

from pelctl.base.binary import escape
from pelctl.base.durations import format_duration_ms
from pelctl.core.models import PendingFilter, parse_id
from pelctl.render import pending as pending_render
from pelctl.render.table import fmt_int
from pelctl.tui.actions import ACTIONS, ActionRequest, describe_filter, is_filtered
from pelctl.tui.messages import OpenDlq, OpenStream
from pelctl.tui.screens.group_view import GroupView
from pelctl.tui.source import GroupSnapshot
from pelctl.tui.widgets.keyed_table import KeyedTable


class _Extra(TypedDict, total=False):
    """The fields of an :class:`ActionRequest` that an operator action adds."""

    to_consumer: bytes | None
    consumer: bytes | None
    dlq: bytes | None
    reason: str | None
    assume_dead: bool


class GroupScreen(GroupView):
    OPERATOR_ACTIONS = ("claim", "requeue", "ack", "dlq_move", "prune")
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("f,slash", "filter", "Filter"),
        Binding("F", "clear_filter", "Clear filter", show=False),
        Binding("space", "mark", "Mark", show=False),
        Binding("u", "unmark", "Unmark all", show=False),
        Binding("d,v", "view_entry", "Describe"),
        Binding("t", "trace_entry", "Trace"),
        Binding("c", "op_claim", "Claim"),
        Binding("r", "op_requeue", "Requeue"),
        Binding("a", "op_ack", "Ack"),
        Binding("m", "op_dlq_move", "To DLQ"),
        Binding("x", "op_prune", "Prune"),
        Binding("D", "open_dlq", "DLQ"),
        Binding("ctrl+r", "refresh", "Refresh, walking the PEL now", show=False),
    ]

    # -- navigation and filters ------------------------------------------------------------
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_mark(self) -> None:
        self.entries.toggle_mark()
        if self.entries.has_focus:
            self.entries.action_cursor_down()

    def action_unmark(self) -> None:
        self.entries.clear_marks()

    def action_filter(self) -> None:
        from pelctl.tui.screens.filter import FilterScreen

        names = (
            [c.name for c in self.data.consumers] if isinstance(self.data, GroupSnapshot) else []
        )

        def chosen(filters: PendingFilter | None) -> None:
            if filters is not None:
                self.set_filters(filters)

        self.app.push_screen(FilterScreen(self.filters, names), chosen)

    def action_clear_filter(self) -> None:
        self.set_filters(PendingFilter())

    def set_filters(self, filters: PendingFilter) -> None:
        if filters == self.filters:
            return
        self.filters = filters
        self.entries.clear_marks()
        self.refresh_now(restart=True)

    def on_data_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "consumers":
            key = event.row_key.value
            row = self.consumers.row_for(key) if key else None
            if row is None:
                return
            name = row.sort_values[0]
            same = self.filters.consumer == name
            self.set_filters(
                PendingFilter(
                    consumer=None if same else name,
                    min_idle_ms=self.filters.min_idle_ms,
                    min_deliveries=self.filters.min_deliveries,
                )
            )
            self.notify(f"filter: {describe_filter(self.filters)}", timeout=3)
        elif event.data_table.id == "entries":
            self.action_mark()

    def action_open_dlq(self) -> None:
        snap = self.data if isinstance(self.data, GroupSnapshot) else None
        from pelctl.core.dlq.envelope import default_dlq

        self.post_message(
            OpenDlq(snap.dlq if snap and snap.dlq else default_dlq(self.stream), source=self.stream)
        )

    def action_view_entry(self) -> None:
        """The entry under the cursor of the stuck-entries table, read again and decoded."""
        from pelctl.tui.screens.entry import EntryDetail, EntryScreen

        key = self.entries.cursor_key
        if key is None:
            self.notify("no entry to view: the stuck-entries table is empty", severity="warning")
            return
        source, stream, group, entry_id = self.session.source, self.stream, self.group, key.encode()

        def load() -> EntryDetail:
            snap = source.entry(stream, group, entry_id)
            return EntryDetail(pending_render.pel_pairs(snap.pending, group), snap.fields)

        title = f"{escape(stream)} / {escape(group)} · {key}"
        self.app.push_screen(EntryScreen(title, load, trace=self.tracer(stream, entry_id)))

    def action_trace_entry(self) -> None:
        """The story of the entry under the cursor: its copies, each group, the audit log."""
        key = self.entries.cursor_key
        if key is None:
            self.notify("no entry to trace: the stuck-entries table is empty", severity="warning")
            return
        self.tracer(self.stream, key.encode())()

    def action_switch_group(self) -> None:
        self.post_message(OpenStream(self.stream, replace=True))

    # -- operator actions ------------------------------------------------------------------
    def _target(self) -> tuple[tuple[bytes, ...], PendingFilter | None] | None:
        marked = self.entries.marked
        if marked:
            ids = tuple(sorted((k.encode() for k in marked), key=parse_id))
            return ids, None
        if is_filtered(self.filters):
            return (), self.filters
        key = self.entries.cursor_key
        if key is None:
            self.notify("nothing to act on: the stuck-entries table is empty", severity="warning")
            return None
        return (key.encode(),), None

    def _request(self, action: str, **extra: Unpack[_Extra]) -> ActionRequest | None:
        target = self._target()
        if target is None:
            return None
        ids, filters = target
        expected = None
        if filters is not None and isinstance(self.data, GroupSnapshot):
            expected = self.data.aggregate.matched
        return ActionRequest(
            action, self.stream, self.group, ids=ids, filters=filters, expected=expected, **extra
        )

    def _consumer_names(self) -> list[bytes]:
        if not isinstance(self.data, GroupSnapshot):
            return []
        return [c.name for c in sorted(self.data.consumers, key=lambda c: c.idle_ms)]

    def action_op_claim(self) -> None:
        from pelctl.tui.screens.prompt import PromptScreen

        if self._target() is None:
            return
        names = self._consumer_names()

        def chosen(value: bytes | None) -> None:
            if value:
                request = self._request("claim", to_consumer=value)
                if request is not None:
                    self.run_operator_action(request)

        self.app.push_screen(
            PromptScreen(
                "Claim to which consumer?",
                "The entries move to this consumer's PEL (XCLAIM with min-idle).",
                suggestions=names,
                default=names[0] if names else b"",
            ),
            chosen,
        )

    def action_op_requeue(self) -> None:
        request = self._request("requeue")
        if request is not None:
            self.run_operator_action(request)

    def action_op_ack(self) -> None:
        request = self._request("ack")
        if request is not None:
            self.run_operator_action(request)

    def action_op_dlq_move(self) -> None:
        from pelctl.core.dlq.envelope import default_dlq
        from pelctl.tui.screens.prompt import PromptScreen

        if self._target() is None:
            return

        def chosen(value: bytes | None) -> None:
            if value is not None:
                request = self._request(
                    "dlq_move",
                    dlq=default_dlq(self.stream),
                    reason=value.decode("utf-8", "replace") or None,
                )
                if request is not None:
                    self.run_operator_action(request)

        self.app.push_screen(
            PromptScreen(
                "Reason for the dead-letter move",
                f"Recorded in each envelope (_dlq_reason) of {escape(default_dlq(self.stream))}.",
                default=b"quarantined from pelctl tui",
                allow_empty=True,
            ),
            chosen,
        )

    def action_op_prune(self) -> None:
        from pelctl.tui.screens.prompt import PromptScreen

        key = self.consumers.cursor_key
        row = self.consumers.row_for(key) if key else None
        if row is None:
            self.notify("select a consumer in the consumers table first", severity="warning")
            return
        name, pending = row.sort_values[0], row.sort_values[1]
        others = [n for n in self._consumer_names() if n != name]
        verdict = f"{row.cells[-2]} ({row.cells[-1]})"  # VERDICT and REASON, as shown

        def prune(to_consumer: bytes | None, assume_dead: bool) -> None:
            self.run_operator_action(
                ActionRequest(
                    "prune",
                    self.stream,
                    self.group,
                    consumer=name,
                    to_consumer=to_consumer or None,
                    assume_dead=assume_dead,
                )
            )

        if not pending:
            prune(None, False)  # it holds nothing: deleting it drops no entry
            return
        prompt = PromptScreen(
            f"Prune {escape(name)}: it holds {fmt_int(pending)} entries",
            "Reassign them to which consumer? (They are claimed to it first, then the "
            "consumer is deleted. Empty: refuse.)",
            suggestions=others,
            default=others[0] if others else b"",
            allow_empty=True,
            checkbox=(
                "Assume its worker is dead (--assume-dead)",
                f"Its verdict now: {verdict}. Below Redis 7.2 a consumer whose liveness is "
                "unknown is refused unless this is ticked: tick it only once you have "
                "checked its worker is gone (the process, CLIENT LIST). An active consumer "
                "is refused either way.",
            ),
        )

        def chosen(value: bytes | None) -> None:
            if value is not None:
                prune(value, prompt.checked)

        self.app.push_screen(prompt, chosen)

    def after_action(self, outcome: object) -> None:
        self.entries.clear_marks()
        self.force_scan = True  # the refresh that follows shows what the action did

    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        out: list[tuple[str, str, Callable[[], object]]] = [
            ("Filter stuck entries…", "consumer, min idle, min deliveries", self.action_filter),
            ("Clear the filter", describe_filter(self.filters), self.action_clear_filter),
            ("Open the dead-letter view", "DLQ of this stream", self.action_open_dlq),
            ("View the entry", "payload decoded, raw fields, PEL data", self.action_view_entry),
            ("Switch group", "other groups of this stream", self.action_switch_group),
        ]
        for threshold in (60_000, 600_000, 3_600_000):
            label = format_duration_ms(threshold)
            out.append(
                (
                    f"Show entries idle ≥ {label}",
                    "filter",
                    partial(self._show_idle, threshold),
                )
            )
        out.append(
            (
                "Show poison suspects (delivered 5+ times)",
                "filter",
                lambda: self.set_filters(PendingFilter(min_deliveries=5)),
            )
        )
        if not self.session.read_only:
            for name in self.OPERATOR_ACTIONS:
                spec = ACTIONS[name]
                out.append((f"{spec.title}…", spec.description, getattr(self, f"action_op_{name}")))
        return out

    def _show_idle(self, min_idle_ms: int) -> None:
        self.set_filters(
            PendingFilter(
                consumer=self.filters.consumer,
                min_idle_ms=min_idle_ms,
                min_deliveries=self.filters.min_deliveries,
            )
        )
