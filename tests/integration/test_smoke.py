from pelctl.core.inspect import inspect_stream
from pelctl.demo import scenario as sc


def test_inspect_matches_xinfo(r, conn):
    sc.add_entries(r, b"s", 50)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"c1", 10)
    result = inspect_stream(conn, b"s")
    assert result.length == 50
    assert result.groups[0].pending == 10
    assert result.groups[0].consumers[0].name == b"c1"


def test_cli_pending_ndjson(r, cli):
    sc.add_entries(r, b"s", 5)
    sc.create_group(r, b"s", b"g")
    sc.deliver(r, b"s", b"g", b"c1", 5)
    res = cli("pending", "s", "g", "-o", "ndjson")
    assert res.exit_code == 0, res.stderr
    assert len(res.ndjson) == 5
    assert set(res.ndjson[0]) == {"id", "consumer", "idle_ms", "deliveries"}


def test_missing_stream_exit_3(r, cli):
    res = cli("inspect", "nope")
    assert res.exit_code == 3
    assert res.stderr.startswith("error: stream nope not found")
