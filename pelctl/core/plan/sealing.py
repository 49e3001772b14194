"""The plan key and the seal: an HMAC-SHA256 over a canonical serialisation of the whole
plan (header and items), keyed with the user's plan key (:func:`plan_key`:
``$XDG_STATE_HOME/pelctl/plan.key``, made on first use, mode 0600; ``PELCTL_PLAN_KEY``
overrides it so a team can share plans). :class:`PlanRefused` is how every check of a plan
file says no (exit 2)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import tempfile
from pathlib import Path
from typing import Any

from pelctl.base.errors import ConfigError, OperationFailed, UsageError
from pelctl.base.paths import plan_key_path

SEAL_ALG = "HMAC-SHA256"
KEY_ENV = "PELCTL_PLAN_KEY"
MIN_KEY_CHARS = 32
SHARE_HINT = (
    "apply it as the user and on the machine that made it, or share one key: set "
    f"{KEY_ENV} to the same secret where the plan is made and where it is applied "
    "(docs/safety.md)"
)
NARROW_HINT = (
    "a plan is sealed: to narrow it, make a new plan with narrower filters "
    "(--limit, --consumer, --idle, --min-deliveries)"
)
_KEY_ID = re.compile(r"[0-9a-f]{16}")


class PlanRefused(UsageError):
    """The plan does not belong to this server, database or stream, was changed after it
    was made, or was sealed with another key (exit 2). Nothing is changed."""


def plan_key(*, create: bool = False) -> tuple[bytes, str] | None:
    """(key, where it came from): ``PELCTL_PLAN_KEY``, else the key file (made when
    ``create`` and missing: 32 random bytes as hex, mode 0600, next to the audit log).
    None when there is no key and ``create`` is false."""
    text = os.environ.get(KEY_ENV, "").strip()
    if text:
        if len(text) < MIN_KEY_CHARS:
            raise UsageError(
                f"{KEY_ENV} is too short ({len(text)} characters): a plan key needs at least "
                f"{MIN_KEY_CHARS}",
                hint="make one with: openssl rand -hex 32",
            )
        return text.encode(), KEY_ENV
    path = plan_key_path()
    try:
        text = _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
        text = _create_key(path)
    if len(text) < MIN_KEY_CHARS:
        raise ConfigError(
            f"the plan key {path} is damaged (shorter than {MIN_KEY_CHARS} characters)",
            hint="delete it: the next --plan-out makes a new one (plans sealed with the old "
            "key will no longer apply)",
        )
    return text.encode(), str(path)


def _read_key(path: Path) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
                os.fchmod(fh.fileno(), 0o600)
            return fh.read(4_096).strip()
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(
            f"cannot read the plan key {path}: {getattr(err, 'strerror', None) or err}"
        ) from None


def _create_key(path: Path) -> str:
    """Write a new key atomically: a reader never sees half a key, and of two processes
    creating it at once one wins and both use its key."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".plan-key-", dir=path.parent)  # mode 0600
        try:
            os.write(fd, (secrets.token_hex(32) + "\n").encode())
            os.fsync(fd)
            os.close(fd)
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another pelctl made it first: use that one
        finally:
            os.unlink(tmp)
        return _read_key(path)
    except (OSError, ConfigError) as err:
        why = err.strerror if isinstance(err, OSError) else err.message
        raise OperationFailed(
            f"cannot create the plan key {path}: {why}",
            hint=f"fix the state directory's permissions, or set {KEY_ENV}",
        ) from None


def key_id(key: bytes) -> str:
    """A short fingerprint of a key (for messages; it reveals nothing of the key)."""
    return hashlib.sha256(b"pelctl plan key id\0" + key).hexdigest()[:16]


def canonical(doc: dict[str, Any]) -> bytes:
    """The bytes the seal covers: the whole plan but its ``seal``, as sorted, compact,
    ASCII-only JSON (the same for any layout of the file)."""
    body = {k: v for k, v in doc.items() if k != "seal"}
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def _digest(key: bytes, doc: dict[str, Any]) -> str:
    return hmac.new(key, b"pelctl-plan/2\n" + canonical(doc), hashlib.sha256).hexdigest()


def seal(doc: dict[str, Any], key: bytes | None = None) -> dict[str, Any]:
    """``doc`` with its ``seal`` (the user's key unless ``key`` is given)."""
    if key is None:
        found = plan_key(create=True)
        assert found is not None
        key = found[0]
    out = {k: v for k, v in doc.items() if k != "seal"}
    out["seal"] = {"alg": SEAL_ALG, "key_id": key_id(key), "digest": _digest(key, out)}
    return out


def check_seal(doc: dict[str, Any], source: str = "the plan") -> None:
    """Refuse (exit 2) a plan that is not sealed, was changed after it was sealed, or was
    sealed with a key this user does not have."""
    mark = doc.get("seal")
    if not isinstance(mark, dict) or not isinstance(mark.get("digest"), str):
        raise PlanRefused(
            f"{source} is not sealed: pelctl apply only runs plans it sealed",
            hint="make a new plan with --plan-out",
        )
    if mark.get("alg") != SEAL_ALG:
        raise PlanRefused(
            f"{source} has an unknown seal (alg {str(mark.get('alg'))[:20]!r})",
            hint="make a new plan with --plan-out",
        )
    found = plan_key()
    if found is None:
        raise PlanRefused(
            f"{source} was sealed with a key this user does not have (no {plan_key_path()} "
            f"and no {KEY_ENV})",
            hint=SHARE_HINT,
        )
    key, where = found
    try:
        expected = _digest(key, doc)
    except (TypeError, ValueError):  # NaN or a value JSON cannot hold: not what was sealed
        expected = None
    given = mark["digest"]
    # no digest matches a plan that cannot be sealed (not even ""); compare_digest takes only
    # ASCII text
    if expected is not None and given.isascii() and hmac.compare_digest(expected, given):
        return
    theirs = str(mark.get("key_id") or "")
    if theirs != key_id(key):
        shown = theirs if _KEY_ID.fullmatch(theirs) else "unknown"
        raise PlanRefused(
            f"{source} was sealed with another key (key {shown}), not with this user's "
            f"({where}: key {key_id(key)})",
            hint=SHARE_HINT,
        )
    raise PlanRefused(
        f"{source} was changed after it was made: its seal does not match", hint=NARROW_HINT
    )
