"""pelctl/render/inspect.py: a stream inspection to its tables and JSON (no server)."""

from __future__ import annotations

from dataclasses import replace

from pelctl.core.models import (
    Advice,
    ConsumerInfo,
    GroupInfo,
    IdleCounts,
    IdmpState,
    PelSummary,
    PendingEntry,
    StreamInspection,
    TrimEstimate,
    UnreadLoss,
)
from pelctl.render import inspect as ir
from tests.unit.render_text import render

OLDEST = PendingEntry(b"1700000000000-0", b"c2", 7_200_000, 2)
BILLING = GroupInfo(
    b"billing",
    2,
    700,
    b"1700000000500-0",
    1500,
    800,
    consumers=(
        ConsumerInfo(b"c1", 0, 1_000, 1_000, "active", "recent-read"),
        ConsumerInfo(b"c2\x1b", 700, 7_200_000, -1, "dead-suspect", "inactive-over-threshold"),
    ),
    pel=PelSummary(700, b"1700000000000-0", b"1700000000699-0"),
    oldest=(OLDEST,),
    idle_counts=IdleCounts((60_000, 600_000, 3_600_000), (700, 700, 700), 700, OLDEST, 0),
    ghosts=3,
)
SHIPPING = GroupInfo(b"shipping", 0, 0, b"0-0", None, None)
INSPECTION = StreamInspection(
    b"orders",
    3000,
    b"1700000000000-0",
    b"1700000002999-0",
    (BILLING, SHIPPING),
    "redis://localhost:6379/0",
    now_ms=1_700_007_200_000,
    advice=(Advice("do x", "pelctl claim"),),
    dlq=b"orders:dlq",
    dlq_length=1,
)


def test_summary_pairs() -> None:
    assert ir.summary_pairs(INSPECTION) == [
        ("Stream", "orders"),
        ("Length", "3,000"),
        ("First id", "1700000000000-0"),
        ("Last id", "1700000002999-0"),
        ("Groups", "2"),
        ("Server", "redis://localhost:6379/0"),
        ("DLQ", "orders:dlq (1 entry)"),
    ]


def test_plain_tables() -> None:
    texts = [render("plain", t) for t in ir.tables(INSPECTION)]
    assert texts == [
        "# Groups\n"
        "GROUP       CONSUMERS    PENDING    LAG    LOST  LAST DELIVERED      ENTRIES READ    OLDEST PENDING\n"  # noqa: E501
        "billing             2        700    800       -  1700000000500-0            1,500             2h00m\n"  # noqa: E501
        "shipping            0          0      -       -  0-0                            -                 -\n",  # noqa: E501
        "# Consumers of billing\n"
        "CONSUMER      PENDING    IDLE    INACTIVE  VERDICT       REASON\n"
        "c1                  0      1s          1s  active        recent-read\n"
        "c2\\x1b            700   2h00m       never  dead-suspect  inactive-over-threshold\n",
        "# PEL health of billing\n"
        "  IDLE ≥ 1m    IDLE ≥ 10m    IDLE ≥ 1h    LONGEST IDLE  HELD BY    ID                 DELIVERED ≥ 5    GHOSTS\n"  # noqa: E501
        "        700           700          700           2h00m  c2         1700000000000-0                0         3\n",  # noqa: E501
        "# Oldest pending in billing (lowest ids)\n"
        "ID               CONSUMER      IDLE    DELIVERIES\n"
        "1700000000000-0  c2           2h00m             2\n",
        "# Consumers of shipping\nCONSUMER    PENDING    IDLE    INACTIVE    VERDICT    REASON\n",
    ]


def test_styles() -> None:
    assert ir.consumers_table(BILLING).row_styles == ["green", "bold red"]
    health = ir.health_table(BILLING)
    assert health is not None and health.row_styles == ["red"]  # idle >= 1h, ghosts
    assert ir.health_table(SHIPPING) is None  # the PEL was not scanned


def test_json() -> None:
    oldest = {"id": "1700000000000-0", "consumer": "c2", "idle_ms": 7_200_000, "deliveries": 2}
    assert ir.to_json(INSPECTION) == {
        "stream": "orders",
        "length": 3000,
        "first_id": "1700000000000-0",
        "last_id": "1700000002999-0",
        "server_version": "redis://localhost:6379/0",
        "groups": [
            {
                "group": "billing",
                "pending": 700,
                "lag": 800,
                "readable": None,
                "trimmed_unread": None,
                "last_delivered_id": "1700000000500-0",
                "entries_read": 1500,
                "consumers": [
                    {
                        "consumer": "c1",
                        "pending": 0,
                        "idle_ms": 1000,
                        "inactive_ms": 1000,
                        "verdict": "active",
                        "verdict_reason": "recent-read",
                    },
                    {
                        "consumer": "c2\\x1b",
                        "pending": 700,
                        "idle_ms": 7_200_000,
                        "inactive_ms": -1,
                        "verdict": "dead-suspect",
                        "verdict_reason": "inactive-over-threshold",
                    },
                ],
                "pel": {
                    "count": 700,
                    "min_id": "1700000000000-0",
                    "max_id": "1700000000699-0",
                    "oldest_pending_age_ms": 7_200_000,
                },
                "oldest": [oldest],
                "idle_counts": [
                    {"min_idle_ms": 60_000, "count": 700},
                    {"min_idle_ms": 600_000, "count": 700},
                    {"min_idle_ms": 3_600_000, "count": 700},
                ],
                "longest_idle": oldest,
                "poison_suspects": 0,
                "ghosts": 3,
            },
            {
                "group": "shipping",
                "pending": 0,
                "lag": None,
                "readable": None,
                "trimmed_unread": None,
                "last_delivered_id": "0-0",
                "entries_read": None,
                "consumers": [],
                "oldest": [],
            },
        ],
        "dlq": "orders:dlq",
        "dlq_length": 1,
        "idmp": None,
        "safe_trim": None,
        "advice": [{"message": "do x", "command": "pelctl claim"}],
    }


def test_the_inspect_renderer() -> None:
    """The whole report: the document is the JSON above; CSV has one record per consumer;
    the view is the summary, each table after a blank line, then the advice."""
    from pelctl.render.protocol import Blank, Message, Pairs

    assert ir.INSPECT.document(INSPECTION) == ir.to_json(INSPECTION)
    assert ir.INSPECT.records(INSPECTION) == [
        {"stream": "orders", "group": "billing", **ir.consumer_json(c)} for c in BILLING.consumers
    ]
    view = list(ir.INSPECT.view(INSPECTION, 100))
    assert view[0] == Pairs(ir.summary_pairs(INSPECTION))
    tables = ir.tables(INSPECTION)
    assert view[1 : 1 + 2 * len(tables)] == [p for t in tables for p in (Blank(), t)]
    assert view[1 + 2 * len(tables) :] == [
        Blank(),
        Message("Advice:", style="bold"),
        Message("  • do x"),
        Message("      pelctl claim", style="cyan"),
    ]


def test_the_consumers_renderer() -> None:
    """A group's consumers as the dashboard shows them: the rows of inspect's table."""
    assert ir.CONSUMERS.columns == ir.CONSUMER_COLUMNS
    table = ir.consumers_table(BILLING)
    assert [ir.CONSUMERS.row(c) for c in BILLING.consumers] == list(table.rows)
    assert [ir.CONSUMERS.style(c) for c in BILLING.consumers] == ["green", "bold red"]
    assert [ir.CONSUMERS.record(c) for c in BILLING.consumers] == [
        ir.consumer_json(c) for c in BILLING.consumers
    ]


IDMP = IdmpState(
    duration_s=100,
    maxsize=100,
    pids_tracked=2,
    iids_tracked=150,
    iids_added=1_204,
    iids_duplicates=37,
)


def test_idmp_state() -> None:
    with_idmp = replace(INSPECTION, idmp=IDMP)
    assert ir.summary_pairs(with_idmp)[-2:] == [
        ("IDMP", "2 producers, 150 ids kept (window 100s, at most 100 ids a producer)"),
        (
            "IDMP writes",
            "1,204 added, 37 duplicates not added (answered with the first write's id)",
        ),
    ]
    assert ir.to_json(with_idmp)["idmp"] == {
        "duration_s": 100,
        "maxsize": 100,
        "pids_tracked": 2,
        "iids_tracked": 150,
        "iids_added": 1_204,
        "iids_duplicates": 37,
    }
    assert ir.idmp_brief(IDMP) == "IDMP 2 producers · 37 dup"
    one = IdmpState(60, 1, 1, 1, 1, 1)
    assert ir.idmp_pairs(one) == [
        ("IDMP", "1 producer, 1 id kept (window 60s, at most 1 ids a producer)"),
        ("IDMP writes", "1 added, 1 duplicate not added (answered with the first write's id)"),
    ]


# slow read 100 of 1,000 entries, then XTRIM MAXLEN 500 (Redis 7.0: the server's lag still
# counts the 400 entries gone).
SLOW = GroupInfo(
    b"slow",
    1,
    0,
    b"1700000000099-0",
    100,
    900,
    readable=500,
    trimmed_unread=UnreadLoss(400),
)
TRIMMED = StreamInspection(
    b"orders",
    500,
    b"1700000000500-0",
    b"1700000000999-0",
    (SLOW, replace(SHIPPING, trimmed_unread=UnreadLoss(None, False))),
    "redis 7.0.15",
    now_ms=1_700_007_200_000,
    safe_trim=TrimEstimate(b"1700000000500-0", b"slow", "undelivered", 0, True, None),
)


def test_what_a_trim_lost() -> None:
    """LAG is what the group can still read, LOST beside it; the line under the table says
    the server's count too; JSON keeps the server's lag and adds both."""
    groups = render("plain", ir.tables(TRIMMED)[0])
    assert groups.splitlines()[1:] == [
        "GROUP       CONSUMERS    PENDING    LAG    LOST  LAST DELIVERED      ENTRIES READ    OLDEST PENDING",  # noqa: E501
        "slow                1          0    500     400  1700000000099-0              100                 -",  # noqa: E501
        "shipping            0          0      -       ?  0-0                            -                 -",  # noqa: E501
    ]
    assert ir.tables(TRIMMED)[0].row_styles == ["red", "red"]
    assert ir.loss_lines(TRIMMED) == [
        "slow: lag 900 (the server's count) → 500 readable, 400 lost to trimming before it "
        "read them",
        "shipping: readable: not known, some lost to trimming before it read them (how many "
        "is not known)",
    ]
    slow = ir.to_json(TRIMMED)["groups"][0]
    assert (slow["lag"], slow["readable"]) == (900, 500)
    assert slow["trimmed_unread"] == {"count": 400, "exact": True, "cause": "trimmed"}
    view = list(ir.INSPECT.view(TRIMMED, 100))
    from pelctl.render.protocol import Message

    assert view[3] == Message(ir.loss_lines(TRIMMED)[0], style="red")  # under the groups


def test_what_a_safe_trim_would_free() -> None:
    estimate = TrimEstimate(b"1700000000100-0", b"slow", "undelivered", 100, True, 5_600)
    pairs = ir.summary_pairs(replace(INSPECTION, safe_trim=estimate))
    assert pairs[-1] == (
        "Safe trim",
        "100 entries (≈ 5.6 KB), up to group slow's next undelivered entry, 1700000000100-0",
    )
    pending = replace(estimate, reason="pending", entries=2_500_000, exact=False, bytes=None)
    assert ir.safe_trim_text(pending) == (
        "about 2,500,000 entries, up to group slow's oldest pending entry, 1700000000100-0"
    )
    assert ir.safe_trim_text(TRIMMED.safe_trim) == (
        "nothing now: group slow has not read the first entry yet"
    )
    assert ir.safe_trim_text(replace(estimate, reason="pending", entries=0)) == (
        "nothing now: the first entry is still pending in group slow"
    )
    assert ir.safe_trim_text(TrimEstimate(None, None, "no-groups", 0, True, None)) == (
        "no consumer group says what was read (trim needs --maxlen or --minid)"
    )
    assert ir.to_json(replace(INSPECTION, safe_trim=estimate))["safe_trim"] == {
        "count": 100,
        "exact": True,
        "bytes": 5_600,
        "bound": "1700000000100-0",
        "bound_group": "slow",
        "bound_kind": "undelivered",
    }
    assert ir.format_bytes(999) == "999 B"
    assert ir.format_bytes(1_250_000_000) == "1.2 GB"
