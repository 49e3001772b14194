"""Redis URLs: redaction of secrets and the pieces pelctl needs."""

from __future__ import annotations

import math
import re
from urllib.parse import parse_qs, unquote, urlsplit

from pelctl.base.errors import UsageError

SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
# The userinfo runs to the LAST "@" before the path, as urlsplit() and redis-py read it, so a
# password with a raw "@" in it (``redis://u:p@ss@host``) is redacted whole; so is one with a
# raw "#" or "?" (not valid in a URL, but typed all the same: see has_raw_specials).
_USERINFO = re.compile(r"^(?P<scheme>[a-z+]+://)(?P<userinfo>[^/]*)@", re.IGNORECASE)
_ANY_URL = re.compile(r"\b(rediss?(?:\+sentinel)?://)([^\s/]*)@", re.IGNORECASE)
# redis-py also accepts ``?password=...`` (and ``ssl_password``, a key's passphrase) in the query.
_QUERY_PASSWORD = re.compile(r"([?&](?:ssl_)?password=)[^&#\s]*", re.IGNORECASE)
_QUERY_CREDENTIALS = ("username", "password")


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
    """(username, password) of a URL, percent-decoded: from its userinfo, else from the
    ``?username=``/``?password=`` query parameters redis-py also reads."""
    parts = urlsplit(url)
    query = _query(parts.query)
    if parts.password is not None:
        user = unquote(parts.username) if parts.username else query.get("username")
        return user, unquote(parts.password)
    if parts.username:
        return query.get("username"), unquote(parts.username)
    return query.get("username"), query.get("password")


def strip_credentials(url: str) -> str:
    """The URL without its userinfo and without ``username``/``password`` query parameters:
    pelctl passes credentials as separate arguments, never inside the URL."""
    match = _USERINFO.match(url)
    url = match.group("scheme") + url[match.end() :] if match else url
    base, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hash_, fragment = rest.partition("#")
    kept = [p for p in query.split("&") if p.partition("=")[0].lower() not in _QUERY_CREDENTIALS]
    query = "&".join(p for p in kept if p)
    return base + ("?" + query if query else "") + hash_ + fragment


def _query(query: str) -> dict[str, str]:
    """The first value of each query parameter, as redis-py reads them (blanks dropped)."""
    return {name: values[0] for name, values in parse_qs(query).items() if values}


def scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def has_raw_specials(url: str) -> bool:
    """A userinfo with a raw ``#`` or ``?``: urlsplit() would cut the password there."""
    match = _USERINFO.match(url)
    return match is not None and any(c in match.group("userinfo") for c in "#?")


# -- checking a URL before it is used ---------------------------------------------------------

_BOOL_TRUE = ("1", "t", "true", "y", "yes")
_BOOL_FALSE = ("0", "f", "false", "n", "no")  # redis-py's FALSE_STRINGS
_CERT_REQS = ("none", "optional", "required")
# Query parameters of redis://, rediss:// and unix:// URLs that redis-py parses and pelctl lets
# through, each with its check: (kind, minimum). Anything else is refused: redis-py would pass
# an unknown name to the connection class (a TypeError), and the parameters pelctl sets itself
# (below) would silently undo what it relies on.
_PARAMS: dict[str, tuple[str, float | None]] = {
    "db": ("int", 0),
    "socket_timeout": ("float", 0),
    "socket_connect_timeout": ("float", 0),
    "socket_read_size": ("int", 1),
    "socket_keepalive": ("bool", None),
    "retry_on_timeout": ("bool", None),
    "health_check_interval": ("int", 0),
    "max_connections": ("int", 1),
    "username": ("str", None),
    "password": ("str", None),
    "ssl_cert_reqs": ("choice", None),
    "ssl_check_hostname": ("bool", None),
    "ssl_ca_certs": ("str", None),
    "ssl_ca_path": ("str", None),
    "ssl_certfile": ("str", None),
    "ssl_keyfile": ("str", None),
    "ssl_password": ("str", None),
    "ssl_ciphers": ("str", None),
    "ssl_min_version": ("int", 0),
    "ssl_include_verify_flags": ("flags", None),
    "ssl_exclude_verify_flags": ("flags", None),
}
_OWNED = {
    "protocol": "pelctl speaks RESP2 (the reply shapes it parses)",
    "decode_responses": "pelctl reads bytes so binary names round-trip",
    "encoding": "pelctl reads bytes so binary names round-trip",
    "encoding_errors": "pelctl reads bytes so binary names round-trip",
    "client_name": "pelctl names its connections pelctl:<version>:<command>",
    "retry_on_error": "pelctl retries reads itself",
}
_URL_HINT = "e.g. redis://host:6379/0, rediss://host:6380/0, unix:///run/redis.sock?db=0"


def check_url(url: str, where: str = "") -> tuple[str, ...]:
    """Refuse a URL redis-py could not use, or would use other than it reads, with a usage
    error that shows it redacted: a bad port, database or query parameter.

    Returns the query parameters that turn TLS verification off (``ssl_cert_reqs=none``,
    ``ssl_check_hostname=false``), so the caller can warn as loudly as for --tls-insecure.
    ``where`` (``--url``, ``context prod``) says where the URL came from."""
    shown = redact(url) + (f" (from {where})" if where else "")
    secrets = _userinfo_secrets(url)
    try:
        parts = urlsplit(url)
    except ValueError as err:
        raise UsageError(
            f"bad URL {shown}: {redact_text(str(err), secrets)}", hint=_URL_HINT
        ) from None
    kind = parts.scheme.lower()
    if kind.endswith("+sentinel"):
        return ()  # hosts, service and db are checked where the sentinels are asked
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        host = parts.netloc.rpartition("@")[2]
        text = (
            host.rpartition("]")[2].partition(":")[2]
            if host.startswith("[")
            else (host.partition(":")[2])
        )
        if "@" not in parts.netloc and not text.isdigit():
            # ``redis://:secret`` (the host forgotten): the "port" may well be a password.
            netloc = parts.netloc[: len(parts.netloc) - len(text)] + "***"
            masked = url.replace(parts.netloc, netloc, 1) + (f" (from {where})" if where else "")
            raise UsageError(
                f"bad port in {masked}",
                hint="the port is a number from 1 to "
                "65535; a password goes before an @: redis://:PASSWORD@host:6379/0",
            )
        raise UsageError(
            f"bad port {text!r} in {shown}", hint="the port is a number from 1 to 65535"
        )
    if kind != "unix" and parts.path not in ("", "/") and not re.fullmatch(r"/\d+/?", parts.path):
        raise UsageError(
            f"bad database {redact_text(unquote(parts.path.strip('/')), secrets)!r} in {shown}",
            hint="the path is the database number: redis://host:6379/0",
        )
    insecure: list[str] = []
    for name, value in _query(parts.query).items():
        if name in _OWNED:
            raise UsageError(
                f"URL parameter {name} is not allowed in {shown}", hint=f"remove it: {_OWNED[name]}"
            )
        if name not in _PARAMS:
            raise UsageError(
                f"unknown URL parameter {name!r} in {shown}",
                hint="the parameters pelctl passes on are listed in docs/configuration.md",
            )
        if name.startswith("ssl_") and kind != "rediss":
            raise UsageError(f"URL parameter {name} needs a rediss:// URL, not {shown}")
        flag = _check_param(name, value, shown)
        if flag:
            insecure.append(flag)
    return tuple(insecure)


def _check_param(name: str, value: str, shown: str) -> str | None:
    """Check one query parameter; returns ``name=value`` when it turns TLS verification off."""
    kind, minimum = _PARAMS[name]
    shown_value = "***" if "password" in name else repr(value)
    bad = f"bad value {shown_value} for URL parameter {name} in {shown}"
    if kind in ("int", "float"):
        try:
            number = int(value) if kind == "int" else float(value)
        except ValueError:
            raise UsageError(
                bad, hint=f"{name} takes {'a whole' if kind == 'int' else 'a'} number"
            ) from None
        if (
            not math.isfinite(number)
            or (minimum is not None and number < minimum)
            or (kind == "float" and number <= 0)
        ):
            at_least = "more than 0" if kind == "float" else f"at least {minimum:g}"
            raise UsageError(bad, hint=f"{name} must be {at_least}")
    elif kind == "bool":
        lowered = value.lower()
        if lowered not in _BOOL_TRUE + _BOOL_FALSE:
            raise UsageError(bad, hint=f"{name} takes true or false")
        if name == "ssl_check_hostname" and lowered in _BOOL_FALSE:
            return f"{name}={value}"
    elif kind == "choice":
        if value not in _CERT_REQS:
            raise UsageError(bad, hint=f"{name} is one of: {', '.join(_CERT_REQS)}")
        if value != "required":
            return f"{name}={value}"
    elif kind == "flags":
        import ssl

        for flag in value.replace("[", "").replace("]", "").split(","):
            if not hasattr(ssl.VerifyFlags, flag.strip()):
                raise UsageError(bad, hint="names of ssl.VerifyFlags, e.g. VERIFY_X509_STRICT")
    return None


def _userinfo_secrets(url: str) -> tuple[str, ...]:
    """The password of a URL's userinfo as typed and decoded, found without urlsplit (which
    may be what fails), so an error message about the URL can be redacted."""
    match = _USERINFO.match(url)
    if not match:
        return ()
    user, sep, password = match.group("userinfo").partition(":")
    secret = password if sep else user
    return tuple(s for s in {secret, unquote(secret)} if s)
