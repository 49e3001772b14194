"""The one guard for what a test needs from the machine (a binary, a Python module).

Under CI (``CI`` set, as ``.ci/run`` does) a missing tool FAILS the test: .ci/run installs
every one of them, so a missing one is a broken CI, never a reason to pass. On a developer
machine (``CI`` unset) it skips with a loud ``MISSING ...`` reason that ``-rs`` lists in the
summary. Either way the session fails under CI if anything was skipped at all (the hook in
tests/conftest.py), so a new silent ``pytest.skip`` cannot hide there either.
"""

from __future__ import annotations

import importlib
import os
import shutil
from types import ModuleType
from typing import NoReturn

import pytest

INSTALL = {
    "redis-server": "apt-get install redis-server",
    "redis-cli": "apt-get install redis-tools",
    "redis-sentinel": "apt-get install redis-sentinel",
    "valkey-server": "apt-get install -t bookworm-backports valkey-server "
    "(needs deb http://deb.debian.org/debian bookworm-backports main)",
    "openssl": "apt-get install openssl",
    "tmux": "apt-get install tmux",
    "zsh": "apt-get install zsh",
    "fish": "apt-get install fish",
    "chromium": "apt-get install chromium",
    "java": "apt-get install openjdk-17-jre-headless",
    "pyarrow": "make setup-spark (pip install 'pelctl[spark]')",
    "pyspark": "make setup-spark (pip install 'pelctl[spark]')",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(what: str, install: str | None = None) -> NoReturn:
    """Fail under CI, skip loudly elsewhere."""
    how = install or INSTALL.get(what, what)
    message = f"MISSING {what}: install it with `{how}`"
    if in_ci():
        pytest.fail(f"{message} (.ci/run must install it: under CI nothing is skipped)",
                    pytrace=False)  # fmt: skip
    pytest.skip(f"{message} (skipped because CI is unset; under CI this fails)",
                allow_module_level=True)  # fmt: skip
    raise AssertionError  # unreachable


def which(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or next(
            (p for p in (f"/usr/bin/{name}", f"/usr/sbin/{name}") if os.path.exists(p)), None
        )
        if found:
            return found
    return None


def need_binary(*names: str, install: str | None = None) -> str:
    """The path of the first of ``names`` found on the machine, or :func:`missing`."""
    found = which(*names)
    if found:
        return found
    missing(names[0], install)


def need_module(name: str, install: str | None = None) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(name, install)
