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
    "promtool": "apt-get install prometheus",
    "prometheus": "apt-get install prometheus",
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
        pytest.fail(
            f"{message} (.ci/run must install it: under CI nothing is skipped)", pytrace=False
        )
    pytest.skip(
        f"{message} (skipped because CI is unset; under CI this fails)", allow_module_level=True
    )
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


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REDIS86_BUILD = (
    "tools/build-redis.sh 8.6 (make test runs it: Debian's source package, cached in .cache/)"
)


def redis86_dir() -> str | None:
    """Where a Redis 8.6 built by tools/build-redis.sh lives (``PELCTL_REDIS86_DIR`` first,
    then the newest ``.cache/redis-8.6.*``), or None."""
    import glob

    given = os.environ.get("PELCTL_REDIS86_DIR")
    candidates = [given] if given else []
    candidates += sorted(
        glob.glob(os.path.join(ROOT, ".cache", "redis-8.6.*")),
        key=lambda p: [int(x) for x in os.path.basename(p)[6:].split(".") if x.isdigit()],
        reverse=True,
    )
    for path in candidates:
        if os.access(os.path.join(path, "redis-server"), os.X_OK):
            return path
    return None


def need_redis86() -> str:
    """The directory holding Redis 8.6's ``redis-server`` and ``redis-cli``, or :func:`missing`."""
    found = redis86_dir()
    if found:
        return found
    missing("redis-server 8.6", REDIS86_BUILD)


def need_module(name: str, install: str | None = None) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(name, install)
