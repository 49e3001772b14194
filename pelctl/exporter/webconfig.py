"""``--web-config FILE``: TLS and basic auth for the metrics endpoint, in the file format of
Prometheus' own exporters (the exporter-toolkit's web configuration), so one file serves
node_exporter, redis_exporter and pelctl alike::

    tls_server_config:
      cert_file: server.crt          # relative paths: from the file's directory
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # optional: mutual TLS
      client_ca_file: clients-ca.crt
      min_version: TLS12
    basic_auth_users:
      prometheus: $2y$10$...         # bcrypt hashes (htpasswd -nBC 10 "" | tr -d ':\\n')
    http_server_config:
      headers:
        Strict-Transport-Security: max-age=31536000

What pelctl does not implement (``cipher_suites``, ``curve_preferences``,
``client_allowed_sans``, HTTP/2 ...) is refused by name rather than silently ignored, so a
file never seems to protect more than it does; ``http2: true`` alone is accepted (served
over HTTP/1.1, with a warning).
"""

from __future__ import annotations

import functools
import hashlib
import os
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pelctl.base.errors import ConfigError

_CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}
_VERSIONS = {
    "TLS10": ssl.TLSVersion.TLSv1,
    "TLS11": ssl.TLSVersion.TLSv1_1,
    "TLS12": ssl.TLSVersion.TLSv1_2,
    "TLS13": ssl.TLSVersion.TLSv1_3,
}
_TLS_KEYS = {
    "cert_file",
    "key_file",
    "client_auth_type",
    "client_ca_file",
    "min_version",
    "max_version",
}
_TOP_KEYS = {"tls_server_config", "basic_auth_users", "http_server_config"}
_HTTP_KEYS = {"headers", "http2"}
# Successful (user, password) checks remembered, so a scrape every few seconds does not pay
# bcrypt's cost each time (the exporter-toolkit caches them too).
_CACHE_MAX = 64


@dataclass
class WebConfig:
    path: str
    cert_file: str | None = None
    key_file: str | None = None
    client_ca_file: str | None = None
    client_auth: ssl.VerifyMode = ssl.CERT_NONE
    min_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    max_version: ssl.TLSVersion | None = None
    users: dict[str, bytes] = field(default_factory=dict)  # name -> bcrypt hash
    headers: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    _good: dict[bytes, None] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def tls(self) -> bool:
        return self.cert_file is not None

    def ssl_context(self) -> ssl.SSLContext:
        """The server's TLS context (certificate and key loaded, client certificates checked
        as configured); a file that cannot be read is a :class:`ConfigError`."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = self.min_version
        if self.max_version is not None:
            ctx.maximum_version = self.max_version
        try:
            ctx.load_cert_chain(self.cert_file or "", self.key_file)
            if self.client_ca_file:
                ctx.load_verify_locations(self.client_ca_file)
        except (OSError, ssl.SSLError) as err:
            raise ConfigError(
                f"{self.path}: cannot load the TLS certificate, key or client CA: {err}",
                hint="check cert_file, key_file and client_ca_file (paths are relative to "
                "the web config file)",
            ) from None
        ctx.verify_mode = self.client_auth
        return ctx

    def check(self, user: str, password: str) -> bool:
        """Basic auth: is ``password`` the one whose bcrypt hash ``user`` has?"""
        import bcrypt

        hashed = self.users.get(user)
        # An unknown user costs a bcrypt check too, so timing does not tell names apart.
        target = hashed if hashed is not None else _dummy_hash()
        key = hashlib.sha256(b"\0".join((user.encode(), password.encode(), target))).digest()
        with self._lock:
            if hashed is not None and key in self._good:
                return True
        try:
            ok = bcrypt.checkpw(password.encode(), target)
        except ValueError:  # a malformed hash in the file (refused when loading)
            ok = False
        if ok and hashed is not None:
            with self._lock:
                if len(self._good) >= _CACHE_MAX:
                    self._good.clear()
                self._good[key] = None
            return True
        return False


@functools.cache
def _dummy_hash() -> bytes:
    """A bcrypt hash (cost 10) no password is checked against but an unknown user's."""
    import bcrypt

    return bcrypt.hashpw(os.urandom(16).hex().encode(), bcrypt.gensalt(10))


def load(path: str) -> WebConfig:
    """Read and check a web configuration file; every problem is one :class:`ConfigError`
    naming the file and the key."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as err:
        raise ConfigError(f"--web-config: cannot read {path}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"--web-config: {path} is not valid YAML: {err}") from None
    doc = {} if doc is None else doc
    if not isinstance(doc, Mapping):
        raise ConfigError(f"--web-config: {path}: expected a mapping at the top")
    _known(path, "", doc, _TOP_KEYS)
    base = os.path.dirname(os.path.abspath(path))
    cfg = WebConfig(path)
    warnings: list[str] = []
    tls = doc.get("tls_server_config")
    if tls is not None:
        _tls(cfg, path, base, _mapping(path, "tls_server_config", tls))
    users = doc.get("basic_auth_users")
    if users is not None:
        cfg.users = _users(path, _mapping(path, "basic_auth_users", users))
    http = doc.get("http_server_config")
    if http is not None:
        http = _mapping(path, "http_server_config", http)
        _known(path, "http_server_config.", http, _HTTP_KEYS)
        if http.get("http2"):
            warnings.append(f"{path}: http_server_config.http2 is ignored (HTTP/1.1 only)")
        headers = _mapping(path, "http_server_config.headers", http.get("headers") or {})
        cfg.headers = tuple((str(k), _text(path, f"headers.{k}", v)) for k, v in headers.items())
    cfg.warnings = tuple(warnings)
    return cfg


def _tls(cfg: WebConfig, path: str, base: str, tls: Mapping[str, Any]) -> None:
    _known(path, "tls_server_config.", tls, _TLS_KEYS)
    for key in ("cert_file", "key_file"):
        if not tls.get(key):
            raise ConfigError(f"--web-config: {path}: tls_server_config needs {key}")
    cfg.cert_file = _file(base, _text(path, "cert_file", tls["cert_file"]))
    cfg.key_file = _file(base, _text(path, "key_file", tls["key_file"]))
    if tls.get("client_ca_file"):
        cfg.client_ca_file = _file(base, _text(path, "client_ca_file", tls["client_ca_file"]))
    auth = tls.get("client_auth_type") or "NoClientCert"
    if auth not in _CLIENT_AUTH:
        raise ConfigError(
            f"--web-config: {path}: client_auth_type {auth!r} is not supported",
            hint=f"use one of {', '.join(_CLIENT_AUTH)}",
        )
    cfg.client_auth = _CLIENT_AUTH[auth]
    if cfg.client_auth != ssl.CERT_NONE and not cfg.client_ca_file:
        raise ConfigError(f"--web-config: {path}: client_auth_type {auth} needs client_ca_file")
    for key in ("min_version", "max_version"):
        value = tls.get(key)
        if value is None:
            continue
        if value not in _VERSIONS:
            raise ConfigError(
                f"--web-config: {path}: {key} {value!r} is not a TLS version",
                hint=f"use one of {', '.join(_VERSIONS)}",
            )
        setattr(cfg, key, _VERSIONS[value])


def _users(path: str, users: Mapping[str, Any]) -> dict[str, bytes]:
    out = {}
    for name, hashed in users.items():
        text = _text(path, f"basic_auth_users.{name}", hashed)
        if not text.startswith(("$2a$", "$2b$", "$2y$")) or len(text) != 60:
            raise ConfigError(
                f"--web-config: {path}: the password of basic_auth_users.{name} is not a "
                "bcrypt hash",
                hint="make one with: htpasswd -nBC 10 \"\" | tr -d ':\\n'",
            )
        out[str(name)] = text.encode()
    return out


def _known(path: str, where: str, doc: Mapping[str, Any], known: set[str]) -> None:
    unknown = sorted(str(k) for k in doc if k not in known)
    if unknown:
        raise ConfigError(
            f"--web-config: {path}: {', '.join(where + k for k in unknown)} "
            f"{'is' if len(unknown) == 1 else 'are'} not supported by pelctl",
            hint=f"supported: {', '.join(where + k for k in sorted(known))}",
        )


def _mapping(path: str, where: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"--web-config: {path}: {where} must be a mapping")
    return value


def _text(path: str, where: str, value: object) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"--web-config: {path}: {where} must be a string")
    return value


def _file(base: str, name: str) -> str:
    return os.path.join(base, os.path.expanduser(name))


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """``Authorization: Basic ...`` as (user, password); None when absent or malformed."""
    import base64
    import binascii

    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None
