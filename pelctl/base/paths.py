"""Where pelctl keeps its files (XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path


def config_path() -> Path:
    explicit = os.environ.get("PELCTL_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "pelctl" / "config.toml"


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "pelctl"


def audit_path() -> Path:
    explicit = os.environ.get("PELCTL_AUDIT_LOG")
    if explicit:
        return Path(explicit).expanduser()
    return state_dir() / "audit.jsonl"


def plan_key_path() -> Path:
    """The per-user key that seals plan files (``PELCTL_PLAN_KEY`` overrides its content)."""
    return state_dir() / "plan.key"
