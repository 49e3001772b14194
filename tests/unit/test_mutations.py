"""The mutation declarations and their API without a server: the confirmation question and
the result's first line (exact text: what the user reads before typing y), the targets'
refusals, result counting, and the dispatcher (``plan``/``apply``/``get``)."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

import pytest

from pelctl.base.errors import EXIT_USAGE, UsageError
from pelctl.core import mutations as m
from pelctl.core.mutations import declaration

URL = "redis://h:1/0"


def item(entry_id: bytes, owner: bytes, outcome: str = "requeued") -> m.PlanItem:
    return m.PlanItem(entry_id, owner, 1_000, 1, outcome)


def a_plan(action: str, items: tuple[m.Item, ...], **kw: object) -> m.Plan[m.Item]:
    return m.Plan(action, b"orders", b"billing", items, server=URL, **kw)  # type: ignore[arg-type]


# -- the confirmation question ---------------------------------------------------------------


def test_prompt_names_count_owners_and_server() -> None:
    p = a_plan(
        "requeue",
        (
            item(b"1-0", b"c1"),
            item(b"2-0", b"c2"),
            item(b"3-0", b"c1"),
            item(b"4-0", b"c3", "skip"),
        ),
    )
    assert m.get("requeue").prompt(p) == (
        "requeue 3 entries of orders/billing held by c1, c2 on redis://h:1/0?"
    )


def test_prompt_one_entry_and_the_context() -> None:
    p = a_plan("ack", (item(b"1-0", b"c1", "acked"),), context="prod")
    assert m.get("ack").prompt(p) == (
        "acknowledge 1 entry of orders/billing held by c1 on redis://h:1/0 (context prod)?"
    )
    # a context given to prompt() wins over the plan's
    assert m.get("ack").prompt(p, "stage") == (
        "acknowledge 1 entry of orders/billing held by c1 on redis://h:1/0 (context stage)?"
    )


def test_prompt_says_where_entries_go() -> None:
    claim = a_plan("claim", (item(b"1-0", b"c1", "claimed"),), options=m.Options(to=b"w\n1"))
    assert m.get("claim").prompt(claim) == (
        "claim 1 entry of orders/billing held by c1 to w\\n1 on redis://h:1/0?"
    )
    dlq = a_plan(
        "dlq-move",
        (item(b"1-0", b"c1", "dlq"), item(b"2-0", b"c1", "dlq")),
        options=m.Options(dlq=b"orders:dlq"),
    )
    assert m.get("dlq-move").prompt(dlq) == (
        "move 2 entries of orders/billing held by c1 to orders:dlq on redis://h:1/0?"
    )
    # only claim names --to, only dlq-move names --dlq as the destination
    odd = a_plan("ack", (item(b"1-0", b"c1", "acked"),), options=m.Options(to=b"w", dlq=b"d"))
    assert (
        m.get("ack").prompt(odd)
        == "acknowledge 1 entry of orders/billing held by c1 on redis://h:1/0?"
    )


def test_requeue_prompt_counts_those_past_max_retries() -> None:
    items = (item(b"1-0", b"c1"), item(b"2-0", b"c1", "dlq"), item(b"3-0", b"c1", "dlq"))
    p = a_plan("requeue", items, options=m.Options(max_retries=3, dlq=b"orders:dlq"))
    assert m.get("requeue").prompt(p) == (
        "requeue 3 entries of orders/billing held by c1 (2 past --max-retries to orders:dlq)"
        " on redis://h:1/0?"
    )
    # dlq-move's items are all "dlq": no "past --max-retries" there
    moved = a_plan("dlq-move", (item(b"1-0", b"c1", "dlq"),))
    assert (
        m.get("dlq-move").prompt(moved)
        == "move 1 entry of orders/billing held by c1 on redis://h:1/0?"
    )


def test_prompt_of_ghosts_says_ghost() -> None:
    p = a_plan("ghosts-fix", (item(b"1-0", b"c1", "ghost"), item(b"2-0", b"c2", "ghost")))
    assert m.get("ghosts-fix").prompt(p) == (
        "clear 2 ghost entries of orders/billing held by c1, c2 on redis://h:1/0?"
    )
    one = a_plan("ghosts-fix", (item(b"1-0", b"c1", "ghost"),))
    assert (
        m.get("ghosts-fix").prompt(one)
        == "clear 1 ghost entry of orders/billing held by c1 on redis://h:1/0?"
    )


def consumer(name: bytes, outcome: str = "deleted", pending: int = 0) -> m.ConsumerItem:
    return m.ConsumerItem(name, 60_000, pending, outcome)


def test_prune_prompts_name_the_consumers() -> None:
    prune = m.get("consumers-prune")
    one = a_plan("consumers-prune", (consumer(b"w1"),))
    assert prune.prompt(one) == "delete consumer w1 of orders/billing on redis://h:1/0?"
    two = a_plan("consumers-prune", (consumer(b"w1"), consumer(b"w2"), consumer(b"w3", "skip")))
    assert prune.prompt(two) == "delete 2 consumers (w1, w2) of orders/billing on redis://h:1/0?"
    moving = a_plan(
        "consumers-prune",
        (consumer(b"w1", "deleted", 3),),
        options=m.Options(reassign_to=b"w9"),
    )
    assert prune.prompt(moving) == (
        "delete consumer w1 of orders/billing after reassigning its entries to w9 on redis://h:1/0?"
    )
    both = a_plan(
        "consumers-prune",
        (consumer(b"w1", "deleted", 3), consumer(b"w2")),
        options=m.Options(reassign_to=b"w9"),
    )
    assert prune.prompt(both) == (
        "delete 2 consumers (w1, w2) of orders/billing after reassigning their entries to w9"
        " on redis://h:1/0?"
    )
    # a consumer holding entries, no --reassign-to (a hand-edited plan): no destination named
    bare = a_plan("consumers-prune", (consumer(b"w1", "deleted", 3),))
    assert prune.prompt(bare) == "delete consumer w1 of orders/billing on redis://h:1/0?"
    # deletes only: no "after reassigning" even with --reassign-to
    plain = a_plan("consumers-prune", (consumer(b"w1"),), options=m.Options(reassign_to=b"w9"))
    assert prune.prompt(plain) == "delete consumer w1 of orders/billing on redis://h:1/0?"


def test_describe_counts_with_separators_and_without_names() -> None:
    prune, requeue = m.get("consumers-prune"), m.get("requeue")
    p = a_plan("consumers-prune", ())
    assert prune.describe(p, [], 1234) == "1,234 consumers of orders/billing"
    assert prune.describe(p, [], 1) == "1 consumer of orders/billing"
    assert requeue.describe(p, [], 1234) == "1,234 entries of orders/billing"
    dead = a_plan("requeue", (), options=m.Options(dlq=b"d"))
    assert requeue.describe(dead, [], 2000, dead=1500) == (
        "2,000 entries of orders/billing (1,500 past --max-retries to d)"
    )
    assert requeue.describe(a_plan("requeue", ()), [], 2, dead=1) == "2 entries of orders/billing"
    assert requeue.describe(dead, [], 2) == "2 entries of orders/billing"  # none dead by default
    hostile = m.Plan("ack", b"s\xff", b"g\x1b", ())
    assert m.get("ack").describe(hostile, [item(b"1-0", b"c\x00", "acked")], 1) == (
        "1 entry of s\\xff/g\\x1b held by c\\x00"
    )


@pytest.mark.parametrize(("n", "word"), [(0, "entries"), (1, "entry"), (2, "entries")])
def test_nouns(n: int, word: str) -> None:
    assert m.get("ack").noun(n) == word
    assert m.get("consumers-prune").noun(n) == word.replace("entries", "consumers").replace(
        "entry", "consumer"
    )


@pytest.mark.parametrize(
    ("names", "text"),
    [
        ([], ""),
        ([b"a"], "a"),
        ([b"a", b"b", b"b"], "b, a"),
        ([b"a", b"b", b"c"], "a, b, c"),
        ([b"a", b"b", b"c", b"d"], "a, b, c and 1 more"),
        ([b"d", b"a", b"b", b"c", b"d", b"e"], "d, a, b and 2 more"),
        ([b"x\x1b", b"x\x1b"], "x\\x1b"),
    ],
)
def test_name_list(names: list[bytes], text: str) -> None:
    assert m.name_list(names) == text


def test_name_list_limit_and_thousands() -> None:
    names = [str(i).encode() for i in range(1_005)]
    assert m.name_list(names, limit=2) == "0, 1 and 1,003 more"
    assert m.name_list([b"a", b"b"], limit=1) == "a and 1 more"


@pytest.mark.parametrize(
    ("server", "context", "text"),
    [
        ("", None, ""),
        (URL, None, " on redis://h:1/0"),
        (URL, "", " on redis://h:1/0"),
        (URL, "prod", " on redis://h:1/0 (context prod)"),
        ("", "prod", " on context prod"),
        ("", "pr\x1bod", " on context pr\\x1bod"),
        (URL, "pr\x1bod", " on redis://h:1/0 (context pr\\x1bod)"),
    ],
)
def test_on_server(server: str, context: str | None, text: str) -> None:
    assert m.on_server(server, context) == text


# -- the result's first line -----------------------------------------------------------------


def test_outcome_names_what_was_done() -> None:
    p = a_plan(
        "requeue",
        (item(b"1-0", b"c1"), item(b"2-0", b"c2"), item(b"3-0", b"c2", "dlq")),
        options=m.Options(max_retries=3, dlq=b"orders:dlq"),
        context="prod",
    )
    done = [
        m.ItemResult(b"1-0", "requeued", "9-0"),
        m.ItemResult(b"3-0", "dlq", "9-1"),
        m.ItemResult(b"2-0", "requeued", "9-2"),
    ]
    assert m.get("requeue").outcome(p, done) == (
        "requeued 3 entries of orders/billing held by c2, c1 (1 past --max-retries to"
        " orders:dlq) on redis://h:1/0 (context prod)"
    )


def test_outcome_of_entries_found_later_names_only_known_owners() -> None:
    p = a_plan("ack", (item(b"1-0", b"c1", "acked"),))
    done = [m.ItemResult(b"1-0", "acked"), m.ItemResult(b"7-0", "acked")]
    assert m.get("ack").outcome(p, done) == (
        "acknowledged 2 entries of orders/billing held by c1 on redis://h:1/0"
    )
    nobody = [m.ItemResult(b"7-0", "acked")]
    assert (
        m.get("ack").outcome(p, nobody) == "acknowledged 1 entry of orders/billing on redis://h:1/0"
    )


def test_outcome_of_consumers_names_them_even_when_found_later() -> None:
    p = a_plan(
        "consumers-prune",
        (consumer(b"w1", "deleted", 3),),
        options=m.Options(reassign_to=b"w9"),
    )
    done = [m.ItemResult(b"w1", "deleted"), m.ItemResult(b"w2", "deleted")]
    assert m.get("consumers-prune").outcome(p, done) == (
        "deleted 2 consumers (w1, w2) of orders/billing after reassigning their entries to w9"
        " on redis://h:1/0"
    )
    assert m.get("consumers-prune").outcome(p, done[:1]) == (
        "deleted consumer w1 of orders/billing after reassigning its entries to w9 on redis://h:1/0"
    )


def test_outcome_past_tense_defaults_to_verb_and_d() -> None:
    mutation = m.Mutation("x-trim", "trim", "", m.get("ack").planner, m.get("ack").executor)
    p = a_plan("x-trim", (item(b"1-0", b"c1", "acked"),))
    assert mutation.outcome(p, [m.ItemResult(b"1-0", "acked")]) == (
        "trimd 1 entry of orders/billing held by c1 on redis://h:1/0"
    )
    # only requeue counts entries past --max-retries, even with a dead-letter stream set
    with_dlq = a_plan("x-trim", (item(b"1-0", b"c1", "dlq"),), options=m.Options(dlq=b"d"))
    assert mutation.outcome(with_dlq, [m.ItemResult(b"1-0", "dlq")]) == (
        "trimd 1 entry of orders/billing held by c1 on redis://h:1/0"
    )
    assert mutation.outcome(with_dlq, []) == "trimd 0 entries of orders/billing on redis://h:1/0"
    assert (
        mutation.prompt(with_dlq) == "trim 1 entry of orders/billing held by c1 on redis://h:1/0?"
    )


# -- targets ---------------------------------------------------------------------------------

BOTH = "give entry ids or filters, not both"
HINT_FILTERS = "filters: --consumer, --idle, --min-deliveries, --below-deliveries, --limit"
HINT_NONE = "--consumer C, --idle 1h, --min-deliveries 5 (or --all for every pending entry)"
HINT_RANGE = (
    "--min-deliveries N keeps entries delivered at least N times, "
    "--below-deliveries N those delivered fewer than N times"
)


@pytest.mark.parametrize(
    ("targets", "message", "hint"),
    [
        (m.Targets(ids=(b"1-0",), every=True), BOTH, HINT_FILTERS),
        (m.Targets(ids=(b"1-0",), consumer=b""), BOTH, HINT_FILTERS),
        (m.Targets(ids=(b"1-0",), min_idle_ms=0), BOTH, HINT_FILTERS),
        (m.Targets(ids=(b"1-0",), min_deliveries=0), BOTH, HINT_FILTERS),
        (m.Targets(ids=(b"1-0",), below_deliveries=9), BOTH, HINT_FILTERS),
        (m.Targets(), "no entries targeted: give entry ids or a filter", HINT_NONE),
        (m.Targets(limit=10), "no entries targeted: give entry ids or a filter", HINT_NONE),
        (
            m.Targets(min_deliveries=5, below_deliveries=5),
            "--min-deliveries 5 and --below-deliveries 5 select nothing",
            HINT_RANGE,
        ),
        (
            m.Targets(min_deliveries=7, below_deliveries=3),
            "--min-deliveries 7 and --below-deliveries 3 select nothing",
            HINT_RANGE,
        ),
    ],
)
def test_targets_refused_exactly(targets: m.Targets, message: str, hint: str) -> None:
    with pytest.raises(UsageError) as err:
        targets.require_some()
    assert (err.value.message, err.value.hint, err.value.exit_code) == (message, hint, EXIT_USAGE)


@pytest.mark.parametrize(
    "targets",
    [
        m.Targets(ids=(b"1-0",)),
        m.Targets(ids=(b"1-0",), limit=3),
        m.Targets(every=True),
        m.Targets(consumer=b""),
        m.Targets(min_idle_ms=0),
        m.Targets(min_deliveries=0),
        m.Targets(below_deliveries=0),
        m.Targets(min_deliveries=4, below_deliveries=5),
        m.Targets(min_deliveries=5),
    ],
)
def test_targets_accepted(targets: m.Targets) -> None:
    targets.require_some()


# -- results ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        *(
            (o, m.APPLIED)
            for o in ("requeued", "dlq", "claimed", "acked", "ghost", "deleted", "reassigned")
        ),
        *((o, m.FAILED) for o in ("fail", "interrupted", "refused", "unknown")),
        *((o, m.SKIPPED) for o in ("alive", "moved", "not-idle", "lock-held", "")),
    ],
)
def test_status_of(outcome: str, status: str) -> None:
    assert m.status_of(outcome) == status
    assert m.ItemResult(b"1-0", outcome).status == status


def test_build_result_counts_and_headline() -> None:
    p = a_plan(
        "requeue",
        (item(b"1-0", b"c1"), item(b"2-0", b"c1"), item(b"3-0", b"c2")),
        missing=(b"4-0",),
        notes=("planned note",),
    )
    items = (
        m.ItemResult(b"1-0", "requeued", "9-0"),
        m.ItemResult(b"2-0", "moved"),
        m.ItemResult(b"3-0", "fail", "OOM"),
    )
    result = m.build_result(p, items, extra={"z": 2, "a": 1}, interrupted=True, notes=["later"])
    assert result == m.RepairResult(
        action="requeue",
        stream=b"orders",
        group=b"billing",
        dry_run=False,
        matched=4,
        applied=1,
        skipped=1,
        failed=(items[2],),
        items=items,
        extra=(("a", 1), ("z", 2)),
        interrupted=True,
        notes=("planned note", "later"),
        headline="requeued 1 entry of orders/billing held by c1 on redis://h:1/0",
    )
    assert not result.ok
    assert result.outcome_counts() == {"requeued": 1, "moved": 1, "fail": 1, "a": 1, "z": 2}
    # matched given by the executor wins; defaults
    plain = m.build_result(p, items[:1], matched=9)
    assert (plain.matched, plain.extra, plain.interrupted, plain.notes, plain.ok) == (
        9,
        (),
        False,
        ("planned note",),
        True,
    )


def test_dry_run_result() -> None:
    p = a_plan(
        "requeue",
        (
            item(b"1-0", b"c1"),
            item(b"2-0", b"c1", "skip"),
            item(b"3-0", b"c1", "refused"),
            item(b"4-0", b"c1", "dlq"),
        ),
        missing=(b"5-0", b"6-0"),
        notes=("n",),
    )
    assert m.dry_run_result(p) == m.RepairResult(
        action="requeue",
        stream=b"orders",
        group=b"billing",
        dry_run=True,
        matched=6,
        applied=0,
        skipped=4,
        failed=(),
        items=(
            m.ItemResult(b"5-0", "not-pending"),
            m.ItemResult(b"6-0", "not-pending"),
            m.ItemResult(b"1-0", "requeued"),
            m.ItemResult(b"2-0", "skip"),
            m.ItemResult(b"3-0", "refused"),
            m.ItemResult(b"4-0", "dlq"),
        ),
        notes=("n",),
    )


def test_dry_run_of_a_prune_counts_the_entries_it_would_reassign() -> None:
    items = (
        m.ConsumerItem(b"c1", 9, 20, "deleted", "to c9 (dead-suspect: x)"),
        m.ConsumerItem(b"c2", 9, 0, "deleted"),
        m.ConsumerItem(b"c3", 9, 7, "refused", "alive"),
        m.ConsumerItem(b"c4", 9, 3, "deleted"),
        m.ConsumerItem(b"c5", 9, 1, "made-up"),
    )
    p = a_plan("consumers-prune", items, options=m.Options(inactive_ms=1, reassign_to=b"c9"))
    result = m.dry_run_result(p)
    assert result.extra == (("reassigned", 23),)
    assert result.items == (
        m.ItemResult(b"c1", "deleted", "to c9 (dead-suspect: x)"),
        m.ItemResult(b"c2", "deleted"),
        m.ItemResult(b"c3", "refused", "alive"),
        m.ItemResult(b"c4", "deleted"),
        m.ItemResult(b"c5", "made-up"),
    )
    # without --reassign-to, or for entries, there is nothing reassigned to count
    assert m.dry_run_result(a_plan("consumers-prune", items[1:3])).extra == ()
    entries = a_plan(
        "claim",
        (item(b"1-0", b"c1", "deleted"),),
        options=m.Options(to=b"x", reassign_to=b"y"),
    )
    assert m.dry_run_result(entries).extra == ()


def test_title_names_a_groupless_plan_by_its_stream() -> None:
    assert m.get("ack").title(a_plan("ack", ())) == "ack"
    purge = m.Plan("dlq-purge", b"o\xff:dlq", b"", ())
    assert m.get("dlq-purge").title(purge) == "dlq-purge of o\\xff:dlq"


# -- the dispatcher --------------------------------------------------------------------------


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch):
    """``test-record`` declared by its provider module, imported lazily by ``get``."""
    for module in m.PROVIDERS:  # declared before the copy, whichever test ran first
        importlib.import_module(module)
    # the table get() reads is the declaration module's (the package only re-exports it)
    monkeypatch.setattr(declaration, "MUTATIONS", dict(m.MUTATIONS))
    monkeypatch.setattr(declaration, "PROVIDERS", [*m.PROVIDERS, "tests.unit.mutation_provider"])
    monkeypatch.delitem(sys.modules, "tests.unit.mutation_provider", raising=False)
    yield
    sys.modules.pop("tests.unit.mutation_provider", None)


def loaded() -> ModuleType:
    """The provider module as ``get`` imported it (not a stale copy of an earlier test)."""
    m.get("test-record")
    return sys.modules["tests.unit.mutation_provider"]


def test_get_imports_the_providers_on_first_lookup(recorder: None) -> None:
    assert "test-record" not in declaration.MUTATIONS
    record = m.get("test-record")
    provider = importlib.import_module("tests.unit.mutation_provider")
    assert record is provider.RECORD and declaration.MUTATIONS["test-record"] is record
    assert (record.name, record.verb, record.past, record.dangerous) == (
        "test-record",
        "record",
        "recorded",
        True,
    )


def test_get_refuses_an_unknown_name_listing_the_known(recorder: None) -> None:
    with pytest.raises(UsageError) as err:
        m.get("nope")
    assert err.value.message == "unknown mutation 'nope'"
    assert err.value.hint == (
        "known: ack, claim, consumers-prune, dlq-move, dlq-purge, dlq-replay, ghosts-fix,"
        " requeue, test-record, trim"
    )
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_each_mutation_is_provided_by_the_module_get_loads_for_it() -> None:
    """PROVIDED_BY (one module loaded per lookup) names the module that declares each
    mutation, and every declared mutation has its entry."""
    for module in m.PROVIDERS:
        importlib.import_module(module)
    assert set(m.PROVIDED_BY) == set(m.MUTATIONS)
    for name, module in m.PROVIDED_BY.items():
        assert m.MUTATIONS[name].executor.__module__ == module, name


def test_get_loads_only_the_module_that_provides_the_name(
    recorder: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name in PROVIDED_BY loads its own module only (a requeue does not import the DLQ
    commands' modules); a name in no provider's table falls back to loading them all."""
    other = "tests.unit.mutation_provider_unloaded"
    monkeypatch.setattr(declaration, "PROVIDERS", [other, "tests.unit.mutation_provider"])
    monkeypatch.setattr(declaration, "PROVIDED_BY", {"test-record": "tests.unit.mutation_provider"})
    assert m.get("test-record") is sys.modules["tests.unit.mutation_provider"].RECORD
    assert other not in sys.modules  # would raise ModuleNotFoundError if it were imported
    with pytest.raises(ModuleNotFoundError):  # the fallback: every provider module
        m.get("nope")


def test_get_with_nothing_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(declaration, "MUTATIONS", {})
    monkeypatch.setattr(declaration, "PROVIDERS", [])
    monkeypatch.setattr(declaration, "PROVIDED_BY", {})
    with pytest.raises(UsageError) as err:
        m.get("ack")
    assert (err.value.message, err.value.hint) == ("unknown mutation 'ack'", "known: none")


def test_plan_refuses_missing_options_then_hands_everything_to_the_planner(
    recorder: None,
) -> None:
    provider = loaded()
    provider.calls.clear()
    targets = m.Targets(every=True)
    for options, missing in [
        (m.Options(to=b"w"), "reason"),
        (m.Options(reason="", to=b"w"), "reason"),
        (m.Options(reason="why"), "to"),
        (m.Options(reason="why", to=b""), "to"),  # names are bytes: an empty one is refused too
    ]:
        with pytest.raises(UsageError) as err:
            m.plan("conn", "test-record", b"s", b"g", targets, options)
        assert err.value.message == f"test-record needs --{missing}"
    assert provider.calls == []
    opts = m.Options(reason="why", to=b"w", inactive_ms=0)
    p = m.plan("conn", "test-record", b"s", b"g", targets, opts, detail=True)
    assert p == m.Plan("test-record", b"s", b"g", ())
    assert provider.calls == [
        ("plan", ("conn", provider.RECORD, b"s", b"g", targets, opts), {"detail": True})
    ]
    provider.calls.clear()
    m.plan("conn", "test-record", b"s", b"g", targets, opts)
    assert provider.calls[0][2] == {"detail": False}


def test_a_needed_option_name_is_written_as_its_flag() -> None:
    with pytest.raises(UsageError) as err:
        m.plan("conn", "consumers-prune", b"s", b"g", m.Targets(), m.Options())  # type: ignore[arg-type]
    assert err.value.message == "consumers-prune needs --inactive-ms"


def test_apply_hands_every_argument_to_the_executor(recorder: None) -> None:
    provider = loaded()
    provider.calls.clear()
    p = m.Plan("test-record", b"s", b"g", ())

    def progress(done: int, total: int) -> None:
        pass

    result = m.apply("conn", p, progress=progress, force_cross_slot=True, batch_size=7)  # type: ignore[arg-type]
    assert result.action == "test-record"
    assert provider.calls == [
        ("apply", ("conn", p), {"progress": progress, "force_cross_slot": True, "batch_size": 7})
    ]
    provider.calls.clear()
    m.apply("conn", p)  # type: ignore[arg-type]
    assert provider.calls[0][2] == {"progress": None, "force_cross_slot": None, "batch_size": None}
