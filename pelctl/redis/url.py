"""Redis URLs: redaction of secrets and the pieces pelctl needs."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
# The userinfo runs to the LAST "@" before the path, as urlsplit() and redis-py read it, so a
# password with a raw "@" in it (``redis://u:p@ss@host``) is redacted whole; so is one with a
# raw "#" or "?" (not valid in a URL, but typed all the same: see has_raw_specials).
_USERINFO = re.compile(r"^(?P<scheme>[a-z+]+://)(?P<userinfo>[^/]*)@", re.IGNORECASE)
_ANY_URL = re.compile(r"\b(rediss?(?:\+sentinel)?://)([^\s/]*)@", re.IGNORECASE)
# redis-py also accepts ``?password=...`` in the query string.
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#\s]*", re.IGNORECASE)


def redact(url: str) -> str:
    """``redis://user:secret@host`` -> ``redis://user:***@host``; no password, no change."""
    url = _QUERY_PASSWORD.sub(r"\1***", url)
    match = _USERINFO.match(url)
    if not match:
        return url
    userinfo = match.group("userinfo")
    user, sep, _password = userinfo.partition(":")
    if not sep:
        # redis://secret@host: redis-cli (and pelctl) read a lone userinfo as the password.
        return f"{match.group('scheme')}***@{url[match.end() :]}"
    return f"{match.group('scheme')}{user}:***@{url[match.end() :]}"


def redact_text(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Redact every Redis URL in free text (error messages) and any known secret."""
    text = _ANY_URL.sub(lambda m: redact(m.group(1) + m.group(2) + "@"), text)
    text = _QUERY_PASSWORD.sub(r"\1***", text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def credentials(url: str) -> tuple[str | None, str | None]:
    """(username, password) embedded in a URL, percent-decoded."""
    parts = urlsplit(url)
    if parts.password is not None:
        return (unquote(parts.username) if parts.username else None, unquote(parts.password))
    if parts.username:
        return None, unquote(parts.username)
    return None, None


def strip_credentials(url: str) -> str:
    match = _USERINFO.match(url)
    return match.group("scheme") + url[match.end() :] if match else url


def scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def has_raw_specials(url: str) -> bool:
    """A userinfo with a raw ``#`` or ``?``: urlsplit() would cut the password there."""
    match = _USERINFO.match(url)
    return bool(match) and any(c in match.group("userinfo") for c in "#?")
