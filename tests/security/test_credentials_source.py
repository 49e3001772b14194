"""Credentials belong to their source: a context's password, user and TLS files are only ever
sent to that context's URL, never to a URL from ``--url``, ``PELCTL_URL`` or ``REDIS_URL``.

Proved on the wire: a capture server (tests/security/capture.py) records every byte pelctl
sends it, and the context's secrets must not be among them. ``REDISCLI_AUTH``,
``PELCTL_USERNAME`` and ``--askpass`` are the operator's explicit input and go to whatever
URL is chosen.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pelctl.config import load_config, resolve_settings
from tests.security.capture import CaptureServer, closed_port
from tests.topologies.runner import run_pelctl

CTX_PASSWORD = "ctx-pw-4f9e2b71"
CTX_USER = "ctx-user-a81c"
ENV_PASSWORD = "env-pw-19d3e6"


@pytest.fixture
def capture() -> Iterator[CaptureServer]:
    server = CaptureServer()
    yield server
    server.close()


def write_config(text: str) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return path


def prod_context(url: str, extra: str = "") -> Path:
    """The current context ``prod``: a user and a password, for the server at ``url``."""
    return write_config(
        f'current-context = "prod"\n[contexts.prod]\nurl = "{url}"\n'
        f'username = "{CTX_USER}"\npassword = "{CTX_PASSWORD}"\ngroup = "g"\n{extra}'
    )


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


# How a URL that is not the context's can be given.
ELSEWHERE = {
    "--url": lambda url: (["--url", url], {}),
    "PELCTL_URL": lambda url: ([], {"PELCTL_URL": url}),
    "REDIS_URL": lambda url: ([], {"REDIS_URL": url}),
}


@pytest.mark.parametrize("source", sorted(ELSEWHERE))
@pytest.mark.parametrize("chosen", ["current-context", "--context", "PELCTL_CONTEXT"])
def test_context_secrets_never_reach_a_url_from_a_flag_or_the_environment(
    capture: CaptureServer, source: str, chosen: str
) -> None:
    prod_context(f"rediss://127.0.0.1:{closed_port()}/0")  # the context's own server
    args, env = ELSEWHERE[source](capture.url)
    if chosen == "--context":
        args = [*args, "--context", "prod"]
    elif chosen == "PELCTL_CONTEXT":
        env = {**env, "PELCTL_CONTEXT": "prod"}
    res = run_pelctl("streams", "-o", "json", *args, env=env)
    assert res.exit_code == 0, res.stderr
    sent = capture.captured()
    assert b"SCAN" in sent  # the command did talk to the capture server...
    assert CTX_PASSWORD.encode() not in sent  # ...and never sent it the context's secrets
    assert CTX_USER.encode() not in sent
    assert b"AUTH" not in sent
    assert warnings(res.stderr) == [
        "warning: context prod: its username and password are not used with "
        f"{capture.url} (the URL came from {source}); a context's credentials go only to its "
        "own URL"
    ]
    assert CTX_PASSWORD not in res.stdout + res.stderr


def test_context_secrets_go_to_its_own_url(capture: CaptureServer) -> None:
    prod_context(capture.url)
    res = run_pelctl("streams", "-o", "json")
    assert res.exit_code == 0, res.stderr
    sent = capture.captured()
    auth = b"*3\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(CTX_USER),
        CTX_USER.encode(),
        len(CTX_PASSWORD),
        CTX_PASSWORD.encode(),
    )
    assert auth in sent
    assert warnings(res.stderr) == []


def test_password_env_of_a_context_is_not_read_for_another_url(capture: CaptureServer) -> None:
    write_config(
        f'current-context = "prod"\n[contexts.prod]\nurl = "redis://127.0.0.1:{closed_port()}"\n'
        'password_env = "PROD_REDIS_PW"\n'
    )
    res = run_pelctl("streams", "--url", capture.url, env={"PROD_REDIS_PW": CTX_PASSWORD})
    assert res.exit_code == 0, res.stderr
    assert CTX_PASSWORD.encode() not in capture.captured()
    assert "its password_env is not used" in res.stderr
    capture.clear()
    write_config(
        f'current-context = "prod"\n[contexts.prod]\nurl = "{capture.url}"\n'
        'password_env = "PROD_REDIS_PW"\n'
    )
    res = run_pelctl("streams", env={"PROD_REDIS_PW": CTX_PASSWORD})
    assert res.exit_code == 0, res.stderr
    assert CTX_PASSWORD.encode() in capture.captured()


def test_operator_secrets_go_to_whatever_url_is_chosen(capture: CaptureServer) -> None:
    """REDISCLI_AUTH, PELCTL_USERNAME and --askpass are typed for this run: they follow it."""
    prod_context(f"redis://127.0.0.1:{closed_port()}/0")
    env = {"REDISCLI_AUTH": ENV_PASSWORD, "PELCTL_USERNAME": "env-user"}
    res = run_pelctl("streams", "--url", capture.url, env=env)
    assert res.exit_code == 0, res.stderr
    sent = capture.captured()
    assert b"$8\r\nenv-user\r\n$" + str(len(ENV_PASSWORD)).encode() in sent
    assert ENV_PASSWORD.encode() in sent and CTX_PASSWORD.encode() not in sent
    capture.clear()
    res = run_pelctl("streams", "--askpass", "--url", capture.url, input="asked-pw-5e\n")
    assert res.exit_code == 0, res.stderr
    assert b"asked-pw-5e" in capture.captured()
    assert CTX_PASSWORD.encode() not in capture.captured()


def test_context_tls_files_are_not_used_for_a_url_from_elsewhere(
    capture: CaptureServer, tmp_path: Path
) -> None:
    """On main the context's TLS files were applied to the flag's ``redis://`` URL, which
    pelctl then refused ("TLS options need a rediss:// URL")."""
    missing = tmp_path / "nope"
    write_config(
        f'current-context = "tls"\n[contexts.tls]\nurl = "rediss://127.0.0.1:{closed_port()}"\n'
        f'tls_ca = "{missing}/ca.pem"\ntls_cert = "{missing}/c.pem"\n'
        f'tls_key = "{missing}/c.key"\ntls_insecure = true\ncluster = true\nread_only = true\n'
    )
    res = run_pelctl("streams", "-o", "json", "--url", capture.url)
    assert res.exit_code == 0, res.stderr
    assert b"SCAN" in capture.captured()
    assert warnings(res.stderr) == [
        "warning: context tls: its tls_ca, tls_cert, tls_key and tls_insecure are not used with "
        f"{capture.url} (the URL came from --url); a context's credentials go only to its own "
        "URL"
    ]
    shown = json.loads(run_pelctl("config", "show", "-o", "json", "--url", capture.url).stdout)
    assert (shown["tls_ca"], shown["tls_cert"], shown["tls_key"]) == (None, None, None)
    assert (shown["tls_insecure"], shown["cluster"]) == (False, None)
    assert shown["read_only"] is True  # never a secret, and only ever safer: it still applies
    own = json.loads(run_pelctl("config", "show", "-o", "json").stdout)
    assert own["tls_ca"] == f"{missing}/ca.pem" and own["tls_insecure"] is True


def test_resolution_by_source() -> None:
    """Every URL source against one context: what the context contributes."""
    config_path = prod_context(
        "rediss://prod.internal:6380/0", 'tls_ca = "/etc/ca.pem"\ntls_insecure = true\n'
    )
    config = load_config(config_path)
    cases = {
        "flag": dict(url="redis://elsewhere:1/0", env={}),
        "PELCTL_URL": dict(env={"PELCTL_URL": "redis://elsewhere:1/0"}),
        "REDIS_URL": dict(env={"REDIS_URL": "redis://elsewhere:1/0"}),
    }
    for name, kwargs in cases.items():
        s = resolve_settings(config=config, **kwargs)  # type: ignore[arg-type]
        assert (s.username, s.password, s.tls_ca, s.tls_insecure) == (None, None, None, False), name
        assert (s.context, s.default_group) == ("prod", "g"), name
        assert len(s.warnings) == 1 and "not used with redis://elsewhere:1/0" in s.warnings[0]
    own = resolve_settings(config=config, env={})
    assert (own.username, own.password, own.tls_ca) == (CTX_USER, CTX_PASSWORD, "/etc/ca.pem")
    assert own.warnings == ("TLS certificate verification is off (--tls-insecure)",)
    # A context without a URL of its own gives no credentials to the default URL either.
    bare = write_config(f'current-context = "x"\n[contexts.x]\npassword = "{CTX_PASSWORD}"\n')
    s = resolve_settings(config=load_config(bare), env={})
    assert s.url == "redis://localhost:6379/0" and s.password is None
