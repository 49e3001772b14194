"""Session defaults and the one-line errors when Java, pyspark or pyarrow is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def test_local_defaults_start_fast_and_stay_offline() -> None:
    from pelctl.base.errors import UsageError
    from pelctl.spark.session import session_conf

    conf = session_conf("local[2]")
    assert conf["spark.ui.enabled"] == "false"
    assert conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert conf["spark.driver.host"] == "127.0.0.1"
    assert int(conf["spark.sql.shuffle.partitions"]) <= 8
    assert conf["spark.sql.session.timeZone"] == "UTC"
    assert not any(k.startswith("spark.jars") for k in conf)
    cluster = session_conf("spark://master:7077")
    assert "spark.driver.bindAddress" not in cluster and "spark.ui.enabled" not in cluster
    assert cluster["spark.sql.session.timeZone"] == "UTC"
    with pytest.raises(UsageError, match="spark.jars.packages"):
        session_conf("local[1]", extra={"spark.jars.packages": "com.redislabs:spark-redis"})


def test_the_session_runs_the_current_interpreter(spark) -> None:
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.sparkContext.master == "local[2]"


def test_java_missing_is_one_line(cli, tmp_path: Path) -> None:
    res = cli("analyze", "--from-redis", env={"JAVA_HOME": "/nonexistent", "PATH": "/nonexistent"})
    assert res.exit_code == 1
    assert res.stderr.splitlines()[0] == "error: Java not found: Spark needs Java 17 or 21"
    assert "hint: install Java 17 or 21" in res.stderr and "Traceback" not in res.stderr


def test_old_java_is_refused(cli, tmp_path: Path) -> None:
    fake = tmp_path / "jdk" / "bin" / "java"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n")
    fake.chmod(0o755)
    res = cli("analyze", "--from-redis", env={"JAVA_HOME": str(tmp_path / "jdk")})
    assert res.exit_code == 1
    assert "Java 11 found" in res.stderr and "Spark 4 needs Java 17 or 21" in res.stderr


def _run_without(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys; sys.modules[{module!r}] = None; "
        "from pelctl.cli.main import main; sys.argv = ['pelctl', *sys.argv[1:]]; main()"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PELCTL_")}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_pyspark_missing_is_one_line(tmp_path: Path) -> None:
    proc = _run_without("pyspark", "analyze", "--from-redis")
    assert proc.returncode == 1
    assert proc.stderr == "error: pyspark is not installed\nhint: pip install 'pelctl[spark]'\n"


def test_pyarrow_missing_is_one_line(tmp_path: Path) -> None:
    proc = _run_without("pyarrow", "snapshot", "--out", str(tmp_path))
    assert proc.returncode == 1
    assert proc.stderr == "error: pyarrow is not installed\nhint: pip install 'pelctl[spark]'\n"


def test_help_loads_neither_pyspark_nor_pyarrow() -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from pelctl.cli.app import app; "
        "r = CliRunner(); [r.invoke(app, [c, '--help']) for c in ('snapshot', 'analyze')]; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip() == "[]"


def test_remote_must_be_a_connect_url(cli, tmp_path: Path) -> None:
    res = cli("analyze", "--from-redis", "--remote", "http://spark:15002;token=abc")
    assert res.exit_code == 2
    assert "--remote must be a sc://host:port URL" in res.stderr and "abc" not in res.stderr
