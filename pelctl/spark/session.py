"""Building a SparkSession that starts fast and never touches the network by default.

Defaults for the embedded ``local[*]`` master (docs/spark.md): no web UI, few shuffle partitions,
the driver bound to loopback, UTC session time zone, quiet logs, no progress bars, and
``PYSPARK_PYTHON`` set to the running interpreter so Python workers import the same
``pelctl``. ``spark.jars.packages`` is never set (it would download from Maven).

``--master`` picks a real cluster (``spark://``, ``yarn``, ``k8s://``); ``--remote`` a Spark
Connect server (``sc://host:15002``) or ``local[N]`` for a Connect server started in-process.
Missing Java or a missing ``pyspark`` is one clear error line, never a Py4J traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pelctl.base.errors import PelctlError, UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

INSTALL_HINT = "pip install 'pelctl[spark]'"
CONNECT_HINT = "pip install 'pyspark[connect]' (grpcio, grpcio-status, pandas, zstandard)"
JAVA_HINT = (
    "install Java 17 or 21 (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) "
    "or set JAVA_HOME"
)
MIN_JAVA = 17
DEFAULT_MASTER = "local[*]"

# Settings for every session pelctl starts. Static ones only take effect on a new JVM.
BASE_CONF: dict[str, str] = {
    "spark.app.name": "pelctl",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
}
LOCAL_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.adaptive.enabled": "true",
    "spark.dynamicAllocation.enabled": "false",
    "spark.python.worker.reuse": "true",
}
_QUIET_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
logger.nativeio.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeio.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = {level}
"""


class SparkUnavailable(PelctlError):
    """pyspark, pyarrow, the Connect client libraries or Java are missing (exit 1)."""


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster")


def require_pyspark() -> None:
    """Raise one clear error when pyspark or pyarrow is not installed."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable("pyspark is not installed", hint=INSTALL_HINT) from None
    require_pyarrow()


def require_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise SparkUnavailable("pyarrow is not installed", hint=INSTALL_HINT) from None


def require_connect_client() -> None:
    try:
        import google.protobuf  # noqa: F401
        import grpc  # noqa: F401
        import grpc_status  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as err:
        raise SparkUnavailable(
            f"Spark Connect needs the {err.name} package, which is not installed",
            hint=CONNECT_HINT,
        ) from None


def find_java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.exists():
            return str(candidate)
    return shutil.which("java")


def java_major(java: str) -> int | None:
    """The major version ``java -version`` reports (17, 21, ...); None if it cannot tell."""
    try:
        proc = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', proc.stderr + proc.stdout)
    if not match:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2):  # 1.8 -> 8
        major = int(match.group(2))
    return major


def require_java() -> None:
    java = find_java()
    if java is None:
        raise SparkUnavailable("Java not found: Spark needs Java 17 or 21", hint=JAVA_HINT)
    major = java_major(java)
    if major is None:
        raise SparkUnavailable(f"{java} does not run or report a version", hint=JAVA_HINT)
    if major < MIN_JAVA:
        raise SparkUnavailable(
            f"Java {major} found at {java}; Spark 4 needs Java 17 or 21", hint=JAVA_HINT
        )


def _log4j_file(level: str) -> str:
    """A log4j2 config that sends only ``level`` and worse to stderr (written once per level)."""
    directory = (
        Path(tempfile.gettempdir()) / f"pelctl-{os.getuid() if hasattr(os, 'getuid') else 0}"
    )
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / f"log4j2-{level.lower()}.properties"
    text = _QUIET_LOG4J.format(level=level.lower())
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return str(path)


def session_conf(
    master: str | None = None,
    *,
    verbose: int = 0,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    """The configuration pelctl starts a classic session with (pure; used by tests)."""
    master = master or DEFAULT_MASTER
    conf = dict(BASE_CONF)
    if is_local_master(master):
        conf.update(LOCAL_CONF)
    level = "WARN" if verbose else "ERROR"
    java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file(level)}"
    conf["spark.driver.extraJavaOptions"] = java_opts
    conf.update(extra or {})
    if "spark.jars.packages" in conf:
        raise UsageError("pelctl never sets spark.jars.packages (it downloads from Maven)")
    return conf


def spark_log_path() -> Path:
    """Where the JVM's own output goes when pelctl is not verbose."""
    from pelctl.base.paths import state_dir

    return state_dir() / "spark.log"


def build_session(
    master: str | None = None,
    *,
    remote: str | None = None,
    verbose: int = 0,
    conf: dict[str, str] | None = None,
    app_name: str = "pelctl",
) -> SparkSession:
    """Start (or reuse) a SparkSession (a Spark Connect one with ``remote``).

    ``remote`` wins over ``master``: ``sc://...`` connects to a Spark Connect server (no Java
    needed here); ``local[N]`` starts a Connect server in this process (Java needed).
    Unless ``verbose``, the JVM's console output (start-up banners, warnings) goes to
    :func:`spark_log_path` instead of the terminal.
    """
    require_pyspark()
    _quiet_python_warnings()
    if master and remote:
        raise UsageError("--master and --remote exclude each other", hint="pick one")
    if remote:
        return _connect_session(remote, verbose=verbose, conf=conf, app_name=app_name)
    if under_spark_submit():
        return _submitted_session(master, conf=conf, app_name=app_name)
    master = master or os.environ.get("PELCTL_SPARK_MASTER") or DEFAULT_MASTER
    require_java()
    if is_local_master(master):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    settings = session_conf(master, verbose=verbose, extra=conf)
    settings["spark.app.name"] = app_name
    settings["spark.master"] = master
    spark_conf = SparkConf().setAll(list(settings.items()))
    try:
        if SparkContext._active_spark_context is None and not verbose:
            _start_quiet_context(spark_conf)
        return SparkSession.builder.config(conf=spark_conf).getOrCreate()
    except PelctlError:
        raise
    except Exception as err:
        raise translate_start_error(err, master) from err


def under_spark_submit() -> bool:
    """Started by ``spark-submit`` (pelctl/cli/spark_job.py): the JVM and its settings exist."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _submitted_session(
    master: str | None, *, conf: dict[str, str] | None, app_name: str
) -> SparkSession:
    """Under spark-submit the master, deploy mode and resources come from spark-submit."""
    if master:
        raise UsageError(
            "--master is spark-submit's to set when pelctl runs under spark-submit",
            hint="pass --master to spark-submit instead",
        )
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    for key, value in {**BASE_CONF, **(conf or {})}.items():
        if key != "spark.app.name":
            builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as err:
        raise translate_start_error(err, "spark-submit") from err


def _start_quiet_context(spark_conf: Any) -> None:
    """Launch the JVM with its stdout/stderr in the log file, then the SparkContext on it."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    log = spark_log_path()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as fh:
        try:
            gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": fh, "stderr": fh})
        except Exception as err:
            raise SparkUnavailable(
                "Spark's JVM did not start", hint=f"see {log}, or run with -v"
            ) from err
    SparkContext(conf=spark_conf, gateway=gateway)


def _quiet_python_warnings() -> None:
    # pyspark warns that it "does not yet fully support pandas >= 3" on import; pelctl does
    # not use pandas.
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark(\.|$)")


def _connect_session(
    remote: str, *, verbose: int, conf: dict[str, str] | None, app_name: str
) -> SparkSession:
    from pyspark.sql import SparkSession

    local = is_local_master(remote)
    if not local and not remote.startswith("sc://"):
        raise UsageError(
            f"--remote must be a sc://host:port URL or local[N], not {_redact(remote)!r}",
            hint="e.g. --remote sc://spark-connect.internal:15002",
        )
    require_connect_client()
    settings: dict[str, str] = {"spark.sql.session.timeZone": "UTC", "spark.app.name": app_name}
    if local:
        require_java()
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings = session_conf(remote, verbose=verbose, extra=settings)
    settings.update(conf or {})
    builder = SparkSession.builder.remote(remote)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with warnings.catch_warnings():
        # Static settings cannot be changed once the local Connect server runs: pyspark
        # warns for each one even though the server was started with them.
        warnings.simplefilter("ignore", UserWarning)
        return _start(builder, _redact(remote))


def _start(builder: SparkSession.Builder, target: str) -> SparkSession:
    try:
        return builder.getOrCreate()
    except Exception as err:
        raise translate_start_error(err, target) from err


def translate_start_error(err: BaseException, target: str) -> PelctlError:
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    if "JAVA_GATEWAY_EXITED" in text or "Java gateway process exited" in text:
        return SparkUnavailable(
            f"Spark's JVM did not start for {target}",
            hint=f"check Java 17/21 (JAVA_HOME); Spark's output is in {spark_log_path()} "
            "(or run with -v)",
        )
    if "UNAVAILABLE" in text or "failed to connect" in text.lower():
        return SparkUnavailable(
            f"cannot reach Spark Connect at {target}: {text[:200]}",
            hint="check the sc:// host and port and that the Connect server runs",
        )
    return SparkUnavailable(f"Spark did not start for {target}: {text[:300]}")


def _redact(url: str) -> str:
    """Connect URLs carry a token as ``;token=...``: never print it."""
    return re.sub(r"(?i)(;token=)[^;]*", r"\1***", url)


def describe(spark: SparkSession) -> str:
    """``local[2] (classic)`` or ``sc://host:15002 (connect)`` for messages."""
    if is_connect(spark):
        return "Spark Connect"
    try:
        return f"{spark.sparkContext.master} (Spark {spark.version})"
    except Exception:  # noqa: BLE001
        return "Spark"


def is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")
