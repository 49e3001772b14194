"""``pelctl demo``: a throwaway local redis-server seeded with a realistic incident.

The server runs on its own free loopback port, in its own temp dir, with nothing persisted.
Its state (pid, port, dir) is kept in ``$XDG_STATE_HOME/pelctl/demo.json``.

The incident (all times relative to when the demo starts):
- ``orders``, group ``billing``: ``billing-1`` alive and busy; ``billing-2`` crashed about an
  hour ago holding 1,204 entries; ``billing-3`` slow but alive (its entries have live
  ``lock:orders:<id>`` keys); 8 poison entries delivered 5+ times; 6 ghosts (pending entries
  whose stream entry was deleted).
- ``orders``, group ``shipping``: healthy with a backlog (lag); group ``analytics`` with no
  consumers.
- ``orders:dlq``: a dead-letter stream with enveloped entries.
- ``{payments}`` and ``{payments}:dlq``: hash-tagged so repairs run as one script in a
  cluster; ``notifications``: a stream without groups; ``legacy``: binary names.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pelctl.base.errors import OperationFailed
from pelctl.base.paths import state_dir

if TYPE_CHECKING:
    import redis

INSTALL_HINT = (
    "redis-server is not installed; on Debian/Ubuntu: sudo apt-get install redis-server "
    "(or run `make demo`, which installs it)"
)


@dataclass(frozen=True)
class DemoState:
    pid: int
    port: int
    dir: str
    url: str
    started_at: float


def state_file() -> Path:
    return state_dir() / "demo.json"


def find_redis_server() -> str | None:
    for candidate in (
        os.environ.get("PELCTL_REDIS_SERVER"),
        shutil.which("redis-server"),
        "/usr/bin/redis-server",
        "/usr/sbin/redis-server",
    ):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by its parent) is not alive
        stat_text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (not Linux): trust kill(0)
    return stat_text.rpartition(")")[2].split()[:1] != ["Z"]


def _is_demo_server(state: DemoState) -> bool:
    """The recorded pid is still our redis-server (not a process that reused the pid)."""
    if not _alive(state.pid):
        return False
    try:
        cmdline = Path(f"/proc/{state.pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc (not Linux): trust kill(0)
    # redis-server rewrites its title to "/usr/bin/redis-server 127.0.0.1:PORT".
    return b"redis-server" in cmdline and str(state.port).encode() in cmdline


def _read_state() -> DemoState | None:
    path = state_file()
    if not path.exists():
        return None
    try:
        return DemoState(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None


def status() -> DemoState | None:
    state = _read_state()
    if state is None or not _is_demo_server(state):
        return None
    return state


def start_server(
    port: int | None = None,
    workdir: str | None = None,
    extra_args: tuple[str, ...] = (),
    binary: str | None = None,
) -> tuple[subprocess.Popen, int, str]:
    """Start a detached redis-server (``binary``, else the machine's) on loopback; return
    (process, port, dir)."""
    binary = binary or find_redis_server()
    if binary is None:
        raise OperationFailed(INSTALL_HINT)
    port = port or free_port()
    workdir = workdir or tempfile.mkdtemp(prefix="pelctl-demo-")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            workdir,
            "--daemonize",
            "no",
            "--logfile",
            os.path.join(workdir, "redis.log"),
            *extra_args,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # No redis-py retries: its default backoff would sleep seconds per failed ping.
    client = redis.Redis(host="127.0.0.1", port=port, protocol=2, retry=Retry(NoBackoff(), 0))
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except (redis.AuthenticationError, redis.ResponseError):
            break  # it answers, but wants a password (--requirepass / ACL): it is up
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                raise OperationFailed(
                    f"redis-server did not start (see {workdir}/redis.log)"
                ) from None
            time.sleep(0.05)
        finally:
            client.close()
    return proc, port, workdir


def up(seed_data: bool = True) -> tuple[DemoState, bool]:
    """Start (or find) the demo; returns (state, started_now)."""
    existing = status()
    if existing:
        return existing, False
    proc, port, workdir = start_server()
    url = f"redis://127.0.0.1:{port}/0"
    state = DemoState(pid=proc.pid, port=port, dir=workdir, url=url, started_at=time.time())
    if seed_data:
        import redis

        client = redis.Redis.from_url(url, protocol=2)
        try:
            seed(client)
        except BaseException:
            proc.kill()
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        finally:
            client.close()
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(state)))
    return state, True


def down() -> DemoState | None:
    state = status()
    path = state_file()
    if state is None:
        stale = _read_state()  # the server died on its own: still remove its temp dir
        if stale and Path(stale.dir).name.startswith("pelctl-demo-"):
            shutil.rmtree(stale.dir, ignore_errors=True)
        if path.exists():
            path.unlink()
        return None
    try:
        os.kill(state.pid, signal.SIGTERM)
        for _ in range(100):
            if not _alive(state.pid):
                break
            time.sleep(0.05)
        else:
            os.kill(state.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    shutil.rmtree(state.dir, ignore_errors=True)
    path.unlink(missing_ok=True)
    return state


# -- the incident ---------------------------------------------------------------------------

HOUR = 3_600_000


def _dlq_envelope(i: int, now_ms: int) -> dict[str, str]:
    reasons = [
        "handler error: KeyError 'sku'",
        "max deliveries exceeded (5)",
        "handler error: timeout calling payments-api",
    ]
    return {
        "order_id": f"ord-{90000 + i}",
        "sku": "" if i % 3 == 0 else f"SKU-{i % 17}",
        "amount": f"{(i * 7) % 500}.00",
        "_dlq_source": "orders",
        "_dlq_group": "billing",
        "_dlq_id": f"{now_ms - 2 * HOUR - i * 60_000}-0",
        "_dlq_owner": "billing-2",
        "_dlq_deliveries": str(5 + i % 3),
        "_dlq_idle_ms": str(HOUR + i * 1000),
        "_dlq_reason": reasons[i % len(reasons)],
        "_dlq_at": str(now_ms - HOUR + i * 60_000),
    }


def seed(client: redis.Redis) -> None:  # a scenario script reads best in one piece
    """Seed the incident described in the module docstring."""
    from pelctl.demo import scenario as sc

    now_ms = int(time.time() * 1000)
    r = sc.raw(client)
    orders = b"orders"
    # 6,000 orders spread over the last three hours.
    start = now_ms - 3 * HOUR
    pipe = r.pipeline(transaction=False)
    for i in range(6_000):
        ts = start + i * 1_700
        pipe.execute_command(
            "XADD",
            orders,
            f"{ts}-0",
            "order_id",
            f"ord-{10000 + i}",
            "sku",
            f"SKU-{i % 97}",
            "amount",
            f"{(i * 13) % 900 + 10}.00",
            "customer",
            f"cust-{i % 311}",
        )
    pipe.execute()
    sc.create_group(client, orders, b"billing", "0")
    sc.create_group(client, orders, b"shipping", "0")
    analytics_start = f"{start + 5_200 * 1_700}-0"
    sc.create_group(client, orders, b"analytics", analytics_start)

    # billing-2 read 1,210 entries and crashed an hour ago; billing-3 is slow but alive (3
    # entries idle 2 minutes, each with a live lock key); 8 poison entries keep failing,
    # delivered 5-8 times; billing-1 processes most of the rest and acks it, 25 in flight.
    crashed = sc.deliver(client, orders, b"billing", b"billing-2", 1_210)
    slow = sc.deliver(client, orders, b"billing", b"billing-3", 3)
    poison = sc.deliver(client, orders, b"billing", b"billing-1", 8)
    done = sc.deliver(client, orders, b"billing", b"billing-1", 4_000)
    # One call ages them all, youngest first: each entry is prepended to Redis 8.4+'s
    # time-ordered PEL in O(1) (see pelctl.demo.scenario).
    sc.age(
        client,
        orders,
        b"billing",
        [
            sc.Aging(b"billing-3", slow, 2 * 60_000),
            *(
                sc.Aging(b"billing-1", [entry_id], 3 * 60_000, 5 + n % 4)
                for n, entry_id in enumerate(poison)
            ),
            sc.Aging(b"billing-2", crashed, HOUR + 5 * 60_000),
        ],
    )
    # 6 of the crashed consumer's entries were later deleted from the stream: ghosts (after
    # the aging: XCLAIM drops a deleted entry from the PEL).
    ghosts = crashed[100:106]
    r.execute_command("XDEL", orders, *ghosts)
    for entry_id in slow:
        r.execute_command("SET", b"lock:orders:" + entry_id, b"billing-3", "PX", 15 * 60_000)
    r.execute_command("XACK", orders, b"billing", *done[:-25])
    # shipping: healthy, 2 in flight, a backlog of unread entries (lag).
    shipped = sc.deliver(client, orders, b"shipping", b"ship-1", 5_000)
    r.execute_command("XACK", orders, b"shipping", *shipped[:-2])

    # The dead-letter stream of orders.
    pipe = r.pipeline(transaction=False)
    for i in range(14):
        flat = [x for kv in _dlq_envelope(i, now_ms).items() for x in kv]
        pipe.execute_command("XADD", b"orders:dlq", f"{now_ms - HOUR + i * 60_000}-0", *flat)
    pipe.execute()

    # {payments}: hash-tagged pair, healthy-ish.
    pay = b"{payments}"
    sc.add_entries(
        client,
        pay,
        400,
        {b"payment_id": b"pay", b"amount": b"12.50"},
        start_ms=now_ms - 30 * 60_000,
    )
    sc.create_group(client, pay, b"settle", "0")
    a = sc.deliver(client, pay, b"settle", b"settle-a", 200)
    b = sc.deliver(client, pay, b"settle", b"settle-b", 150)
    r.execute_command("XACK", pay, b"settle", *a[:-30], *b[:-20])
    sc.set_idle(client, pay, b"settle", b"settle-b", b[-20:], 12 * 60_000)
    r.execute_command(
        "XADD",
        b"{payments}:dlq",
        "*",
        "payment_id",
        "pay-77",
        "amount",
        "0.00",
        "_dlq_source",
        "{payments}",
        "_dlq_group",
        "settle",
        "_dlq_id",
        a[0],
        "_dlq_owner",
        "settle-a",
        "_dlq_deliveries",
        "6",
        "_dlq_idle_ms",
        "900000",
        "_dlq_reason",
        "invalid amount",
        "_dlq_at",
        str(now_ms),
    )

    # A stream nobody consumes.
    sc.add_entries(client, b"notifications", 300, {b"to": b"user@example.com", b"kind": b"email"})

    # Binary names: a legacy producer that writes Latin-1.
    legacy = b"legacy"
    sc.add_entries(client, legacy, 20, {b"name": b"Jos\xe9", b"blob": b"\x00\xff\xfe"})
    sc.create_group(client, legacy, b"import", "0")
    held = sc.deliver(client, legacy, b"import", b"worker-\xff", 5)
    sc.set_idle(client, legacy, b"import", b"worker-\xff", held, 20 * 60_000)

    # Make the crashed consumers look unseen since they crashed (XCLAIM above touched them).
    try:
        from pelctl.demo.timeshift import backdate_consumers
    except ImportError:
        return
    backdate_consumers(client, orders, {b"billing-2": HOUR + 5 * 60_000})
    backdate_consumers(client, legacy, {b"worker-\xff": 20 * 60_000})
    backdate_consumers(client, pay, {b"settle-b": 12 * 60_000})
