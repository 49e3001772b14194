"""Contexts and resolved connection settings from ``~/.config/pelctl/config.toml``.

Precedence for every setting: flag > environment > context > default, with one rule above
it: credentials belong to their source. A context's password, user and TLS settings are only
ever used with that context's own URL; when the URL comes from ``--url`` or the environment,
the context still gives its default group and read-only mode, never its secrets.

```toml
current-context = "staging"

[contexts.staging]
url = "rediss://redis.staging.internal:6380/0"
username = "pelctl-ro"
password_env = "STAGING_REDIS_PASSWORD"   # or password = "..." (file must be 0600)
tls_ca = "~/.config/pelctl/staging-ca.pem"
group = "workers"
lock_key = "lock:{stream}:{id}"          # the lock keys its workers hold (inspect, repairs)
max_server_share = "5%"                  # what pelctl's polling may use of the server's time
read_only = true
```
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pelctl.base.errors import ConfigError, UsageError
from pelctl.base.paths import config_path
from pelctl.redis.settings import DEFAULT_URL, ConnectionSettings
from pelctl.redis.url import (
    SCHEMES,
    check_url,
    credentials,
    has_raw_specials,
    redact,
    strip_credentials,
)

_CONTEXT_KEYS = {
    "url",
    "username",
    "password",
    "password_env",
    "tls_ca",
    "tls_cert",
    "tls_key",
    "tls_insecure",
    "group",
    "read_only",
    "cluster",
    "description",
    "lock_key",
    "max_server_share",
}
_BOOL_KEYS = {"tls_insecure", "read_only", "cluster"}
_PATH_KEYS = {"tls_ca", "tls_cert", "tls_key"}  # "~/..." is expanded


@dataclass(frozen=True)
class Context:
    name: str
    url: str | None = None
    username: str | None = None
    password: str | None = None
    password_env: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_insecure: bool = False
    group: str | None = None
    read_only: bool = False
    cluster: bool | None = None
    description: str | None = None
    lock_key: str | None = None
    max_server_share: float | None = None  # "5%" or 0.05 in the file


@dataclass(frozen=True)
class Config:
    path: Path
    exists: bool
    current_context: str | None = None
    contexts: dict[str, Context] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def load_config(path: Path | None = None) -> Config:
    path = path or config_path()
    if not path.exists():
        return Config(path=path, exists=False)
    import tomllib  # here: without a config file no TOML parser loads (start-up)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read config file {path}: {err}") from None
    raw_contexts = data.get("contexts", {})
    if not isinstance(raw_contexts, dict):
        raise ConfigError(f"{path}: [contexts] must be a table")
    contexts: dict[str, Context] = {}
    has_password = False
    for name, values in raw_contexts.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: context {name!r} must be a table")
        unknown = set(values) - _CONTEXT_KEYS
        if unknown:
            raise ConfigError(
                f"{path}: context {name!r} has unknown keys: {', '.join(sorted(unknown))}",
                hint=f"known keys: {', '.join(sorted(_CONTEXT_KEYS))}",
            )
        for key, value in values.items():
            if key == "max_server_share":
                values = {**values, key: _context_share(path, name, value)}
                continue
            wanted = bool if key in _BOOL_KEYS else str
            if not isinstance(value, wanted):
                shown = "" if key == "password" else f", not {value!r}"  # never echo it
                raise ConfigError(
                    f"{path}: context {name!r}: {key} must be a "
                    f"{'boolean' if wanted is bool else 'string'}{shown}"
                )
        values = {k: os.path.expanduser(v) if k in _PATH_KEYS else v for k, v in values.items()}
        try:
            contexts[name] = Context(name=name, **values)
        except TypeError as err:
            raise ConfigError(f"{path}: context {name!r}: {err}") from None
        url = values.get("url") or ""
        has_password = has_password or bool(values.get("password")) or bool(credentials(url)[1])
    warnings: list[str] = []
    if has_password and os.name == "posix":
        mode = path.stat().st_mode
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            warnings.append(
                f"{path} holds a password and is readable by others; run: chmod 600 {path}"
            )
    current = data.get("current-context")
    if current is not None and not isinstance(current, str):
        raise ConfigError(f"{path}: current-context must be a string")
    return Config(
        path=path,
        exists=True,
        current_context=current,
        contexts=contexts,
        warnings=tuple(warnings),
    )


def resolve_settings(
    *,
    url: str | None = None,
    context: str | None = None,
    username: str | None = None,
    password: str | None = None,
    tls_ca: str | None = None,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    tls_insecure: bool = False,
    cluster: bool | None = None,
    read_only: bool = False,
    max_server_share: str | None = None,
    env: dict[str, str] | None = None,
    config: Config | None = None,
) -> ConnectionSettings:
    """Combine flags, environment and the chosen context (flag > env > context > default)."""
    env = dict(os.environ) if env is None else env
    context_name = context or env.get("PELCTL_CONTEXT")
    ctx: Context | None = None
    if context_name or (config is None or config.exists):
        config = config or load_config()
        context_name = context_name or config.current_context
        if context_name:
            ctx = config.contexts.get(context_name)
            if ctx is None:
                known = ", ".join(sorted(config.contexts)) or "none"
                raise ConfigError(
                    f"no context named {context_name!r} in {config.path}",
                    hint=f"known contexts: {known}",
                )

    own: Context | None = None  # the context whose URL this is: its credentials apply
    if url:
        chosen_url, source = url, "--url"
    elif env.get("PELCTL_URL"):
        chosen_url, source = env["PELCTL_URL"], "PELCTL_URL"
    elif env.get("REDIS_URL"):
        chosen_url, source = env["REDIS_URL"], "REDIS_URL"
    elif ctx and ctx.url:
        chosen_url, source, own = ctx.url, f"context {ctx.name}", ctx
    else:
        chosen_url, source = DEFAULT_URL, "default"
    if "://" not in chosen_url:
        chosen_url = f"redis://{chosen_url}"
    if chosen_url.partition("://")[0].lower() not in SCHEMES:
        raise ConfigError(
            f"unsupported URL scheme in {redact(chosen_url)}",
            hint="use redis://, rediss://, unix:// or redis+sentinel://",
        )

    if has_raw_specials(chosen_url):
        raise ConfigError(
            f"the password in {redact(chosen_url)} has a raw '#' or '?'",
            hint="percent-encode it (# is %23, ? is %3F), or pass it in REDISCLI_AUTH",
        )
    insecure_query = check_url(chosen_url, source)
    url_user, url_password = credentials(chosen_url)
    # Credentials belong to their source: the context's only go with the context's own URL.
    ctx_password = None
    if own:
        ctx_password = own.password or (env.get(own.password_env) if own.password_env else None)
    final_password = password or url_password or env.get("REDISCLI_AUTH") or ctx_password
    final_user = (
        username or url_user or env.get("PELCTL_USERNAME") or (own.username if own else None)
    )

    def pick(flag: Any, ctx_value: Any) -> Any:
        return flag if flag not in (None, False) else ctx_value

    final_insecure = bool(pick(tls_insecure, own.tls_insecure if own else False))
    warnings: list[str] = []
    if ctx is not None and own is None:
        left_out = _secret_keys(ctx)
        if left_out:
            listed = (
                ", ".join(left_out[:-1]) + " and " + left_out[-1] if left_out[1:] else (left_out[0])
            )
            warnings.append(
                f"context {ctx.name}: its {listed} "
                f"{'is' if len(left_out) == 1 else 'are'} not used with "
                f"{redact(strip_credentials(chosen_url))} (the URL came from {source}); "
                "a context's credentials go only to its own URL"
            )
    if final_insecure:
        warnings.append("TLS certificate verification is off (--tls-insecure)")
    elif insecure_query:
        warnings.append(
            f"TLS certificate verification is off ({', '.join(insecure_query)} in the URL)"
        )

    env_read_only = env.get("PELCTL_READ_ONLY", "").lower() in ("1", "true", "yes", "on")
    return ConnectionSettings(
        url=strip_credentials(chosen_url),
        username=final_user,
        password=final_password,
        tls_ca=pick(tls_ca, own.tls_ca if own else None),
        tls_cert=pick(tls_cert, own.tls_cert if own else None),
        tls_key=pick(tls_key, own.tls_key if own else None),
        tls_insecure=final_insecure,
        cluster=cluster if cluster is not None else (own.cluster if own else None),
        context=ctx.name if ctx else None,
        # Not secrets, and only ever safer or more convenient: any chosen context gives them.
        read_only=read_only or env_read_only or bool(ctx and ctx.read_only),
        default_group=ctx.group if ctx else None,
        lock_key=ctx.lock_key if ctx else None,
        max_server_share=_share(max_server_share, env, ctx),
        url_source=source,
        socket_timeout=_timeout_from_env(env),
        warnings=tuple(warnings),
    )


def _secret_keys(ctx: Context) -> list[str]:
    """What a context holds that belongs to its own server only (shown by key name)."""
    return [
        key
        for key in (
            "username",
            "password",
            "password_env",
            "tls_ca",
            "tls_cert",
            "tls_key",
            "tls_insecure",
        )
        if getattr(ctx, key)
    ]


def _share(flag: str | None, env: dict[str, str], ctx: Context | None) -> float:
    """``--max-server-share`` > ``PELCTL_MAX_SERVER_SHARE`` > the context's > 5%. Not a
    secret, and a bound on pelctl itself: any chosen context gives it."""
    from pelctl.base.shares import DEFAULT_MAX_SERVER_SHARE, parse_share

    if flag is not None:
        return parse_share(flag)
    text = env.get("PELCTL_MAX_SERVER_SHARE", "").strip()
    if text:
        try:
            return parse_share(text, source="PELCTL_MAX_SERVER_SHARE")
        except UsageError as err:
            raise ConfigError(err.message, hint=err.hint) from None
    if ctx is not None and ctx.max_server_share is not None:
        return ctx.max_server_share
    return DEFAULT_MAX_SERVER_SHARE


def _context_share(path: Path, name: str, value: object) -> float:
    """A context's ``max_server_share``: ``"5%"`` or a fraction (``0.05``)."""
    from pelctl.base.shares import parse_share

    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(
            f'{path}: context {name!r}: max_server_share must be a string like "5%" or a '
            "fraction like 0.05"
        )
    try:
        return parse_share(str(value), source=f"{path}: context {name!r}: max_server_share")
    except UsageError as err:
        raise ConfigError(err.message, hint=err.hint) from None


def _timeout_from_env(env: dict[str, str]) -> float:
    """``PELCTL_TIMEOUT``: how long one server reply may take (a duration; bare number = ms).

    A stalled server or network then fails the command with one line (exit 4) after at most
    this long, instead of the 10 s default."""
    text = env.get("PELCTL_TIMEOUT", "").strip()
    if not text:
        return ConnectionSettings.socket_timeout
    from pelctl.base.durations import parse_duration_ms
    from pelctl.base.errors import InvalidDuration

    try:
        ms = parse_duration_ms(text)
    except InvalidDuration as err:
        raise ConfigError(f"PELCTL_TIMEOUT: {err}", hint="e.g. PELCTL_TIMEOUT=2s") from None
    if ms <= 0:
        raise ConfigError("PELCTL_TIMEOUT must be more than 0", hint="e.g. PELCTL_TIMEOUT=2s")
    return ms / 1000.0


# -- writing current-context (``pelctl config use-context``) ---------------------------------

# A root-level ``current-context = "..."`` line (bare or quoted key, basic or literal string
# value, an optional comment after it).
_CURRENT_LINE = re.compile(
    r"""^(?P<head>[ \t]*(?:current-context|"current-context"|'current-context')[ \t]*=[ \t]*)"""
    r"""(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')(?P<tail>[ \t]*(?:#[^\n]*)?)$"""
)
_TABLE_HEADER = re.compile(r"^[ \t]*\[")


def set_current_context(name: str, path: Path | None = None) -> Config:
    """Make ``name`` the file's ``current-context``, changing nothing else.

    The line is edited in place (comments, order, spacing and every other key kept), or
    added at the top when there is none; the result is parsed again and must hold the same
    data with only ``current-context`` changed, else nothing is written. The write is
    atomic (a temporary file renamed over it, a symlink followed to its target) and keeps
    the file's mode. An unknown name is a :class:`ConfigError` (exit 2) listing the
    contexts. Returns the configuration as it was before.
    """
    import tomllib

    config = load_config(path)
    if name not in config.contexts:
        known = ", ".join(sorted(config.contexts)) or "none"
        where = config.path if config.exists else f"{config.path} (no such file)"
        raise ConfigError(f"no context named {name!r} in {where}", hint=f"known contexts: {known}")
    target = config.path.resolve()  # a dotfiles symlink stays a symlink
    text = target.read_bytes().decode("utf-8")  # line endings as they are (CRLF kept)
    new_text = _with_current_context(text, name)
    before = tomllib.loads(text)
    after = tomllib.loads(new_text)
    before["current-context"] = name
    if after != before:  # the edit touched something else: refuse rather than damage
        raise ConfigError(
            f"cannot set current-context in {config.path} without changing other content",
            hint=f'set it by hand: current-context = "{name}" at the top of the file',
        )
    _replace_file(target, new_text)
    return config


def _with_current_context(text: str, name: str) -> str:
    import json

    value = json.dumps(name, ensure_ascii=False)  # a JSON string is a TOML basic string
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if _TABLE_HEADER.match(line):
            break  # past the root table: current-context can only be above
        body = line.rstrip("\r\n")
        match = _CURRENT_LINE.match(body)
        if match:
            lines[i] = match["head"] + value + match["tail"] + line[len(body) :]
            return "".join(lines)
    # None yet: after a leading comment block (a file header) if there is one, else first.
    at = 0
    while at < len(lines) and lines[at].lstrip().startswith("#"):
        at += 1
    if not (at and at < len(lines) and not lines[at].strip()):
        at = 0
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    added = f"current-context = {value}{newline}"
    if at:
        added += newline if at + 1 < len(lines) and lines[at + 1].strip() else ""
        return "".join(lines[: at + 1]) + added + "".join(lines[at + 1 :])
    if text and not text.endswith("\n"):
        text += newline
    return added + (newline if text.strip() else "") + text


def _replace_file(target: Path, text: str) -> None:
    import tempfile

    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
