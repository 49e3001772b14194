"""pelctl over TLS (``rediss://``): a CA, server and client certificates made with openssl."""

from __future__ import annotations

from pathlib import Path

from pelctl.demo import scenario as sc
from tests.topologies.runner import one_error_line, run_pelctl


def seed(client) -> None:
    client.flushall()
    sc.add_entries(client, b"tls-s", 20)
    sc.create_group(client, b"tls-s", b"g")
    ids = sc.deliver(client, b"tls-s", b"g", b"c1", 8)
    sc.set_idle(client, b"tls-s", b"g", b"c1", ids[:3], 3_600_000, 2)


def test_rediss_with_ca_and_client_cert(tls_server):
    with tls_server.client() as c:
        seed(c)
    args = tls_server.cert_args()
    res = run_pelctl("streams", "-o", "json", *args, url=tls_server.url)
    assert res.exit_code == 0, res.stderr
    assert [r["stream"] for r in res.json] == ["tls-s"]
    res = run_pelctl("inspect", "tls-s", "-o", "json", *args, url=tls_server.url)
    assert res.exit_code == 0, res.stderr
    assert res.json["groups"][0]["pending"] == 8
    res = run_pelctl(
        "pending", "tls-s", "g", "--idle", "30m", "-o", "ndjson", *args, url=tls_server.url
    )
    assert res.exit_code == 0, res.stderr
    assert len(res.ndjson) == 3
    res = run_pelctl("version", "--server", "-o", "json", *args, url=tls_server.url)
    assert res.exit_code == 0, res.stderr
    assert res.json["server"].startswith("rediss://")


def test_tls_settings_from_a_context(tls_server, tmp_path):
    t = tls_server.tls
    cfg = Path(tmp_path / "config" / "pelctl" / "config.toml")
    cfg.parent.mkdir(parents=True)
    cfg.write_text(
        'current-context = "secure"\n[contexts.secure]\n'
        f'url = "{tls_server.url}"\ntls_ca = "{t.ca}"\n'
        f'tls_cert = "{t.client_cert}"\ntls_key = "{t.client_key}"\n'
    )
    with tls_server.client() as c:
        seed(c)
    res = run_pelctl("streams", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert [r["stream"] for r in res.json] == ["tls-s"]


def test_wrong_ca_is_one_clear_line_exit_4(tls_server):
    t = tls_server.tls
    res = run_pelctl(
        "streams",
        "--tls-ca",
        t.other_ca,
        "--tls-cert",
        t.client_cert,
        "--tls-key",
        t.client_key,
        url=tls_server.url,
    )
    assert res.exit_code == 4, res.stderr
    line = one_error_line(res)
    assert "certificate verify failed" in line, line
    assert "hint: the server's certificate does not verify against --tls-ca" in res.stderr
    assert res.stdout == ""


def test_missing_client_cert_is_refused_exit_4(tls_server):
    """``--tls-auth-clients yes``: without a client certificate the server hangs up."""
    res = run_pelctl("streams", "--tls-ca", tls_server.tls.ca, url=tls_server.url)
    assert res.exit_code == 4, res.stderr
    one_error_line(res)
    assert "client certificate" in res.stderr


def test_client_cert_optional_server_needs_only_the_ca(tls_server_optional):
    with tls_server_optional.client() as c:
        seed(c)
    res = run_pelctl(
        "inspect",
        "tls-s",
        "--tls-ca",
        tls_server_optional.tls.ca,
        "-o",
        "json",
        url=tls_server_optional.url,
    )
    assert res.exit_code == 0, res.stderr
    assert res.json["stream"] == "tls-s"


def test_tls_insecure_warns_and_connects(tls_server):
    t = tls_server.tls
    res = run_pelctl(
        "streams",
        "--tls-insecure",
        "--tls-cert",
        t.client_cert,
        "--tls-key",
        t.client_key,
        "-o",
        "json",
        url=tls_server.url,
    )
    assert res.exit_code == 0, res.stderr
    assert "warning: TLS certificate verification is off" in res.stderr
    # Even against a CA that would have refused the server.
    res = run_pelctl(
        "streams",
        "--tls-insecure",
        "--tls-ca",
        t.other_ca,
        "--tls-cert",
        t.client_cert,
        "--tls-key",
        t.client_key,
        url=tls_server.url,
    )
    assert res.exit_code == 0, res.stderr
    assert "warning: TLS certificate verification is off" in res.stderr


def test_plain_redis_url_to_a_tls_port_is_exit_4(tls_server):
    url = tls_server.url.replace("rediss://", "redis://")
    res = run_pelctl("streams", url=url)
    assert res.exit_code == 4, res.stderr
    one_error_line(res)
    assert "use a rediss:// URL" in res.stderr


def test_tls_options_need_a_rediss_url(tls_server):
    url = tls_server.url.replace("rediss://", "redis://")
    res = run_pelctl("streams", "--tls-ca", tls_server.tls.ca, url=url)
    assert res.exit_code == 2
    assert "rediss://" in one_error_line(res)


def test_unreadable_tls_files_are_usage_errors(tls_server, tmp_path):
    t = tls_server.tls
    for option in ("--tls-ca", "--tls-cert", "--tls-key"):
        args = {"--tls-ca": t.ca, "--tls-cert": t.client_cert, "--tls-key": t.client_key}
        args[option] = str(tmp_path / "nope.pem")
        flat = [x for kv in args.items() for x in kv]
        res = run_pelctl("streams", *flat, url=tls_server.url)
        assert res.exit_code == 2, res.stderr
        assert f"{option}: cannot read" in one_error_line(res)


def test_a_contexts_tls_files_go_only_to_its_own_url(tls_server, tmp_path):
    """The same server named by --url instead of by the context: the context's CA and client
    certificate stay with the context's URL, so the server (which wants a client
    certificate) refuses the connection; the warning says why."""
    t = tls_server.tls
    cfg = Path(tmp_path / "config" / "pelctl" / "config.toml")
    cfg.parent.mkdir(parents=True)
    cfg.write_text(
        'current-context = "secure"\n[contexts.secure]\n'
        f'url = "{tls_server.url}"\ntls_ca = "{t.ca}"\n'
        f'tls_cert = "{t.client_cert}"\ntls_key = "{t.client_key}"\n'
    )
    with tls_server.client() as c:
        seed(c)
    assert run_pelctl("streams", "-o", "json").exit_code == 0  # the context's own URL
    res = run_pelctl("streams", "-o", "json", "--url", tls_server.url)
    assert res.exit_code == 4, res.stderr
    assert res.stderr.splitlines()[0] == (
        "warning: context secure: its tls_ca, tls_cert and tls_key are not used with "
        f"{tls_server.url} (the URL came from --url); a context's credentials go only to its "
        "own URL"
    )
    # Given for this run, the files are used with any URL.
    res = run_pelctl("streams", "-o", "json", *tls_server.cert_args(), "--url", tls_server.url)
    assert res.exit_code == 0, res.stderr


def test_tls_verification_off_in_the_url_warns_like_tls_insecure(tls_server):
    """``?ssl_cert_reqs=none`` turns verification off as --tls-insecure does (here without
    the CA the server's certificate would be refused); it gets the same warning."""
    t = tls_server.tls
    client = ["--tls-cert", t.client_cert, "--tls-key", t.client_key]
    with tls_server.client() as c:
        seed(c)
    refused = run_pelctl("streams", *client, url=tls_server.url)
    assert refused.exit_code == 4 and "certificate verify failed" in refused.stderr
    res = run_pelctl("streams", "-o", "json", *client, url=tls_server.url + "?ssl_cert_reqs=none")
    assert res.exit_code == 0, res.stderr
    assert res.stderr.splitlines() == [
        "warning: TLS certificate verification is off (ssl_cert_reqs=none in the URL)"
    ]
    res = run_pelctl(
        "streams",
        "-o",
        "json",
        "--tls-ca",
        t.ca,
        *client,
        url=tls_server.url + "?ssl_check_hostname=false",
    )
    assert res.exit_code == 0, res.stderr
    assert "TLS certificate verification is off (ssl_check_hostname=false" in res.stderr
