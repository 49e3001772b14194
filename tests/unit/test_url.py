"""Secrets in Redis URLs never reach output: redaction, stripping, and credentials."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pelctl.config import Config, resolve_settings
from pelctl.redis.url import credentials, redact, redact_text, scheme, strip_credentials


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        ("redis://localhost:6379/0", "redis://localhost:6379/0"),
        ("redis://:secret@host:6379/0", "redis://:***@host:6379/0"),
        ("redis://user:secret@host", "redis://user:***@host"),
        ("redis://secret@host/0", "redis://***@host/0"),
        ("rediss://u:s3cr%40t@host:6380", "rediss://u:***@host:6380"),
        ("redis://u:p@ss@host:1/0", "redis://u:***@host:1/0"),  # a raw "@" in the password
        ("redis://:a@b@c@host", "redis://:***@host"),
        ("REDIS://:secret@HOST", "REDIS://:***@HOST"),
        ("unix://:secret@/run/redis.sock?db=1", "unix://:***@/run/redis.sock?db=1"),
        (
            "redis+sentinel://:secret@h1:26379,h2:26379/mymaster",
            "redis+sentinel://:***@h1:26379,h2:26379/mymaster",
        ),
        ("redis://host/0?password=secret&db=1", "redis://host/0?password=***&db=1"),
        ("redis://host:1/0?x=a@b", "redis://host:1/0?x=a@b"),
    ],
)
def test_redact(url: str, redacted: str) -> None:
    assert redact(url) == redacted
    assert "secret" not in redacted and "p@ss" not in redacted


@given(
    user=st.text(
        alphabet=st.characters(blacklist_characters=":/@?#", blacklist_categories=("Cs",)),
        max_size=8,
    ),
    password=st.text(
        alphabet=st.characters(blacklist_characters="/?#", blacklist_categories=("Cs",)),
        min_size=4,
        max_size=16,
    ),
    host=st.sampled_from(["h", "127.0.0.1", "redis.internal:6380"]),
)
def test_redact_never_leaks(user: str, password: str, host: str) -> None:
    url = f"redis://{user}:{password}@{host}/0"
    shown = redact(url)
    assert shown == f"redis://{user}:***@{host}/0"
    if not any(ch.isspace() for ch in user + password):  # free text: a URL ends at a space
        text = redact_text(f"cannot connect to {url}: refused")
        assert text == f"cannot connect to redis://{user}:***@{host}/0: refused"
    # The CLI also passes the known secrets, which covers passwords with spaces too.
    assert password not in redact_text(f"x {url} y", (password,)).replace("***", "")


def test_redact_text() -> None:
    text = "Error connecting to redis://:hunter2@h:1/0 and rediss://u:pw@x:2 (mail me@example.com)"
    assert redact_text(text) == (
        "Error connecting to redis://:***@h:1/0 and rediss://u:***@x:2 (mail me@example.com)"
    )
    assert redact_text("AUTH hunter2 failed", ("hunter2",)) == "AUTH *** failed"
    assert redact_text("nothing here", ("", "x-not-present")) == "nothing here"


@pytest.mark.parametrize(
    ("url", "creds", "stripped"),
    [
        ("redis://h:1/0", (None, None), "redis://h:1/0"),
        ("redis://:pw@h:1/0", (None, "pw"), "redis://h:1/0"),
        ("redis://u:pw@h:1/0", ("u", "pw"), "redis://h:1/0"),
        (
            "redis://pw@h",
            (None, "pw"),
            "redis://h",
        ),  # like redis-cli: a lone userinfo is a password
        ("redis://u:p%40ss%3A@h", ("u", "p@ss:"), "redis://h"),
        ("redis://u:p@ss@h:1/0", ("u", "p@ss"), "redis://h:1/0"),
    ],
)
def test_credentials_and_strip(url: str, creds: tuple, stripped: str) -> None:
    assert credentials(url) == creds
    assert strip_credentials(url) == stripped


def test_scheme() -> None:
    assert scheme("REDISS://h") == "rediss"
    assert scheme("redis+sentinel://h/m") == "redis+sentinel"


def _settings(**kwargs: object):
    return resolve_settings(config=Config(path=None, exists=False), **kwargs)  # type: ignore[arg-type]


def test_settings_keep_password_out_of_url_and_repr() -> None:
    s = _settings(url="redis://ops:hunter2@h:1/0", env={})
    assert (s.url, s.username, s.password) == ("redis://h:1/0", "ops", "hunter2")
    assert s.redacted_url == "redis://h:1/0"
    assert "hunter2" not in repr(s)
    assert "hunter2" in s.secrets


def test_settings_password_sources() -> None:
    assert _settings(url="redis://h", env={"REDISCLI_AUTH": "envpw"}).password == "envpw"
    # a password in the URL beats REDISCLI_AUTH; --askpass (password=) beats both
    assert _settings(url="redis://:urlpw@h", env={"REDISCLI_AUTH": "e"}).password == "urlpw"
    asked = _settings(url="redis://:urlpw@h", password="asked", env={"REDISCLI_AUTH": "e"})
    assert asked.password == "asked"
    assert _settings(env={"PELCTL_URL": "h:7000"}).url == "redis://h:7000"


@pytest.mark.parametrize(
    ("url", "creds", "stripped"),
    [
        ("redis://h/0?password=a%26b&db=1", (None, "a&b"), "redis://h/0?db=1"),
        ("redis://h/0?username=u&password=p", ("u", "p"), "redis://h/0"),
        ("redis://:pw@h/0?username=u", ("u", "pw"), "redis://h/0"),  # the userinfo's password
        ("redis://x:pw@h/0?password=q", ("x", "pw"), "redis://h/0"),  # the userinfo wins
        (
            "rediss://h/0?ssl_cert_reqs=none&password=p#f",
            (None, "p"),
            "rediss://h/0?ssl_cert_reqs=none#f",
        ),
    ],
)
def test_credentials_in_the_query(url: str, creds: tuple, stripped: str) -> None:
    assert credentials(url) == creds
    assert strip_credentials(url) == stripped


def test_query_passwords_are_redacted() -> None:
    assert redact("rediss://h/0?ssl_password=k3y&password=pw") == (
        "rediss://h/0?ssl_password=***&password=***"
    )


@pytest.mark.parametrize(
    ("url", "insecure"),
    [
        ("rediss://h:6380/0", ()),
        ("rediss://h:6380/0?ssl_cert_reqs=required&ssl_check_hostname=true", ()),
        ("rediss://h:6380/0?ssl_cert_reqs=none", ("ssl_cert_reqs=none",)),
        (
            "rediss://h/0?ssl_check_hostname=No&ssl_cert_reqs=optional",
            ("ssl_check_hostname=No", "ssl_cert_reqs=optional"),
        ),
        ("unix:///run/redis.sock?db=3", ()),
        ("redis+sentinel://h1:26379,h2:26379/mymaster/2", ()),
        ("redis://[::1]:6379/0/", ()),
    ],
)
def test_check_url_reports_tls_verification_off(url: str, insecure: tuple) -> None:
    from pelctl.redis.url import check_url

    assert check_url(url) == insecure
