"""How old a sampled part is, in words and JSON (pelctl/render/budget.py)."""

from __future__ import annotations

from pelctl.core.budget import Freshness
from pelctl.render import budget as render


def fresh(**kwargs: object) -> Freshness:
    base: dict[str, object] = {
        "part": "idle histogram",
        "age_s": 18.0,
        "cost_ms": 1_100.0,
        "next_in_s": 4.0,
        "refreshed": False,
        "every_s": 22.0,
        "interval_s": 2.0,
    }
    base.update(kwargs)
    return Freshness(**base)  # type: ignore[arg-type]


def test_the_sentence_says_what_how_old_what_it_costs_and_when_next() -> None:
    assert render.note(fresh()) == (
        "idle histogram from 18s ago: a full scan of this PEL costs 1.1s of server time; next in 4s"
    )
    assert render.short(fresh()) == "from 18s ago · next in 4s"


def test_just_walked_never_walked_and_due_at_the_next_refresh() -> None:
    assert render.age(fresh(refreshed=True, age_s=0.0)) == "just now"
    assert render.age(fresh(age_s=None)) == "not yet"
    assert render.next_run(fresh(next_in_s=1.5)) == "next at the next refresh"
    assert render.note(fresh(cost_ms=None, age_s=None)) == "idle histogram not yet; next in 4s"
    assert "under 1ms" in render.note(fresh(cost_ms=0.4))


def test_json_is_in_milliseconds() -> None:
    assert render.to_json(fresh(cost_ms=1_100.1234)) == {
        "part": "idle histogram",
        "age_ms": 18_000,
        "server_ms": 1_100.123,
        "next_in_ms": 4_000,
        "every_ms": 22_000,
    }
    assert render.to_json(fresh(age_s=None, cost_ms=None))["age_ms"] is None


def test_the_share_used() -> None:
    assert render.share_note(0.031, 0.05) == "server 3.1% of 5%"
