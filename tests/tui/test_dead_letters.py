"""The dead-letter view's DELIV column: the message's every delivery, like `pelctl dlq list`
(docs/tui.md, "Dead letters"). A dead letter whose message was requeued before carries
``_prior_deliveries``: its DELIV is that plus the moved copy's ``_dlq_deliveries``, shown and sorted
so."""

from __future__ import annotations

from pelctl.tui.messages import Refreshed
from pelctl.tui.screens.dlq import DlqScreen
from tests.integration.dlq_builders import add_dead
from tests.tui.conftest import settle


async def test_deliv_is_the_messages_total_and_sorts_by_it(r, make_app, recorder, cli):
    # a: delivered 5 times, then moved (never requeued): 5 in all
    a = add_dead(r, b"jobs:dlq", b"jobs", ((b"n", b"a"),), deliveries=5, original_id=b"1-0")
    # b: requeued after 10 deliveries (the copy carries the lineage), then the copy was
    # delivered once and moved: 11 in all, though its envelope says 1
    lineage = (
        (b"n", b"b"),
        (b"_retry_count", b"1"),
        (b"_prior_deliveries", b"10"),
        (b"_original_id", b"2-0"),
    )
    b = add_dead(r, b"jobs:dlq", b"jobs", lineage, deliveries=1, original_id=b"3-0")
    listed = cli("dlq", "list", "jobs:dlq", "-o", "json")
    assert listed.exit_code == 0, listed.stderr
    app = make_app(read_only=True)
    async with app.run_test(size=(160, 40), message_hook=recorder) as pilot:
        await settle(pilot)
        app.open_dlq(b"jobs:dlq", source=b"jobs")
        await recorder.wait_for(Refreshed, view="dlq")
        await settle(pilot, DlqScreen)
        table = app.screen.table
        cell = {key: table.get_cell(key, "deliveries").plain for key in (a.decode(), b.decode())}
        assert cell == {a.decode(): "5", b.decode(): "11"}
        assert '"deliveries": 11' in listed.stdout  # the same figure as dlq list
        table.sort_by("deliveries", reverse=True)  # most delivered first
        await pilot.pause()
        assert table.coordinate_to_cell_key((0, 0)).row_key.value == b.decode()
        table.sort_by("deliveries", reverse=False)
        await pilot.pause()
        assert table.coordinate_to_cell_key((0, 0)).row_key.value == a.decode()
        # ORIGINAL ID is the message's: b's is the first id of its chain
        assert table.get_cell(b.decode(), "original_id").plain == "2-0"
