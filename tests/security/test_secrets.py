"""Secrets never leak: a representative run of pelctl (reads, repairs, error paths, -v
tracebacks, plan files, the audit log, config output), with the password given every
supported way, is grepped for the password. File permissions are checked too."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import CliResult
from tests.support import servers as sv
from tests.topologies import commands as cm
from tests.topologies.conftest import need
from tests.topologies.runner import run_pelctl, run_subprocess

# Chosen so that no other text contains it by accident; the URL form is percent-encoded.
PASSWORD = "Zx9#Secr3t@pw/7Q"
USER_PASSWORD = "Uq4-acl:Secr3t%55"
SECRETS = (PASSWORD, USER_PASSWORD)


def _forms(secret: str) -> set[str]:
    """The secret as it could appear: raw, percent-encoded, and its distinctive core."""
    return {secret, quote(secret, safe=""), "Secr3t"}


@pytest.fixture(scope="module")
def server():
    s = sv.spawn(need("redis-server"), ["--requirepass", PASSWORD], port=sv.free_port())
    with s.client(password=PASSWORD) as c:
        c.execute_command("ACL", "SETUSER", "ops", "on", f">{USER_PASSWORD}", "~*", "+@all")
    yield s
    s.stop()


@pytest.fixture
def seeded(server):
    with server.client(password=PASSWORD) as c:
        c.flushall()
        cm.seed(c)
    return server


class Transcript:
    """Everything pelctl printed or wrote during the test."""

    def __init__(self) -> None:
        self.runs: list[tuple[list[str], CliResult]] = []

    def add(self, args: list[str], res: CliResult) -> CliResult:
        self.runs.append((args, res))
        return res

    def leaks(self, extra_texts: dict[str, str]) -> list[str]:
        found = []
        texts = {f"{' '.join(a)!r} stdout": r.stdout for a, r in self.runs}
        texts |= {f"{' '.join(a)!r} stderr": r.stderr for a, r in self.runs}
        texts |= extra_texts
        for where, text in texts.items():
            for secret in SECRETS:
                for form in _forms(secret):
                    if form in text:
                        found.append(f"{form!r} in {where}")
        return found


def _all_files(root: Path) -> dict[str, str]:
    out = {}
    for path in root.rglob("*"):
        if path.is_file():
            out[str(path)] = path.read_text(errors="replace")
    return out


def test_no_secret_in_any_output_log_or_file(seeded, tmp_path):
    t = Transcript()
    host = f"127.0.0.1:{seeded.port}"
    enc_pw, enc_user_pw = quote(PASSWORD, safe=""), quote(USER_PASSWORD, safe="")
    url_pw = f"redis://:{enc_pw}@{host}/0"
    url_user = f"redis://ops:{enc_user_pw}@{host}/0"
    plain = f"redis://{host}/0"
    auth_env = {"REDISCLI_AUTH": PASSWORD}
    state = Path(os.environ["XDG_STATE_HOME"])
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'current-context = "prod"\n[contexts.prod]\n'
        f'url = "{plain}"\npassword = "{PASSWORD}"\n'
        f'[contexts.acl]\nurl = "{url_user}"\n'
    )
    config.chmod(0o600)

    ways = [
        ({"url": url_pw}, {}),  # password in the URL (flag)
        ({"url": url_user}, {}),  # ACL user and password in the URL
        ({"url": plain}, auth_env),  # REDISCLI_AUTH
        ({"url": None}, {}),  # the current context's password
    ]
    for how, env in ways:
        for args in cm.read_invocations() + [
            ["config", "show"],
            ["config", "show", "-o", "json"],
            ["config", "contexts"],
        ]:
            for extra in ([], ["-v"], ["-o", "json"]):
                t.add(args + extra, run_pelctl(*args, *extra, url=how["url"], env=env))
        # error paths, plain and verbose (tracebacks)
        for args in (
            ["inspect", "nope"],
            ["pending", "s", "nogroup"],
            ["inspect", "s", "-v"],
            ["pending", "s", "g", "--idle", "bogus"],
            ["streams", "--cluster"],
            ["streams", "--cluster", "-v"],
            ["pending", "nope", "g", "-v"],
            ["streams", "--tls-ca", "/nope.pem", "-v"],
        ):
            t.add(args, run_pelctl(*args, url=how["url"], env=env))
    # --askpass on stdin, also verbose
    for args in (["inspect", "s"], ["inspect", "nope", "-v"]):
        t.add(args, run_pelctl(*args, "--askpass", url=plain, input=PASSWORD + "\n"))
    # wrong passwords, refused and unreachable servers, each with the secret in play
    wrong = f"redis://:{enc_pw}x@{host}/0"
    dead = f"redis://ops:{enc_user_pw}@127.0.0.1:{sv.free_port()}/0"
    sentinel = f"redis+sentinel://:{enc_pw}@127.0.0.1:{sv.free_port()}/mymaster"
    for url in (wrong, dead, sentinel):
        for v in ([], ["-v"]):
            t.add(["streams", *v, url], run_pelctl("streams", *v, url=url))
    t.add(
        ["wrong REDISCLI_AUTH"],
        run_pelctl("streams", "-v", url=plain, env={"REDISCLI_AUTH": PASSWORD + "x"}),
    )
    # repairs: dry run, plan file, applied (audit log), apply, audit tail
    plan = tmp_path / "plan.json"
    for name, args in cm.mutation_invocations().items():
        if name == "apply":
            continue
        for extra in (["--dry-run"], ["-v"], []):
            with seeded.client(password=PASSWORD) as c:
                c.flushall()
                cm.seed(c)
            run_args = [a for a in args if not (extra == ["--dry-run"] and a == "--yes")]
            t.add(run_args + extra, run_pelctl(*run_args, *extra, url=url_pw))
    if cm.exists("apply"):
        with seeded.client(password=PASSWORD) as c:
            c.flushall()
            cm.seed(c)
        t.add(
            ["plan-out"],
            run_pelctl("requeue", "s", "g", "--idle", "30m", "--plan-out", str(plan), url=url_user),
        )
        t.add(["apply"], run_pelctl("apply", str(plan), "--yes", "-v", url=url_user))
        t.add(["apply elsewhere"], run_pelctl("apply", str(plan), "--yes", url=dead))
    if cm.exists("audit tail"):
        t.add(["audit tail"], run_pelctl("audit", "tail", "-n", "1000", "-o", "json"))
    # The real binary, in a child process: argv, exit, stderr exactly as a user sees them.
    for args in (["inspect", "s", "-v"], ["inspect", "nope", "-v"], ["streams", "-v"]):
        t.add(["subprocess", *args], run_subprocess(*args, url=url_pw))
        t.add(["subprocess env", *args], run_subprocess(*args, url=plain, env=auth_env))

    assert len(t.runs) > 150
    files = _all_files(state) | _all_files(tmp_path)
    files.pop(str(config), None)  # the user's own config file holds it, by design
    leaks = t.leaks(files)
    assert not leaks, "\n".join(leaks[:20])
    # Sanity: the runs did reach the server and the redacted forms are what is shown.
    assert sum(r.exit_code == 0 for _, r in t.runs) > 100
    shown = "".join(r.stdout + r.stderr for _, r in t.runs)
    # URLs are shown redacted (a user's password is masked, the user is kept)
    assert f"redis://ops:***@{host}/0" in shown
    assert any("audit" in f for f in files), sorted(files)


def test_config_file_readable_by_others_warns(seeded):
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'current-context = "p"\n[contexts.p]\nurl = "redis://127.0.0.1:{seeded.port}/0"\n'
        f'password = "{PASSWORD}"\n'
    )
    config.chmod(0o644)
    res = run_pelctl("inspect", "s", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert "readable by others" in res.stderr and "chmod 600" in res.stderr
    assert PASSWORD not in res.stderr + res.stdout
    config.chmod(0o600)
    res = run_pelctl("inspect", "s", "-o", "json")
    assert "readable by others" not in res.stderr
    # A password taken from an environment variable is not in the file: no warning.
    config.write_text(
        f'current-context = "p"\n[contexts.p]\nurl = "redis://127.0.0.1:{seeded.port}/0"\n'
        'password_env = "MY_REDIS_PW"\n'
    )
    config.chmod(0o644)
    res = run_pelctl("inspect", "s", "-o", "json", env={"MY_REDIS_PW": PASSWORD})
    assert res.exit_code == 0, res.stderr
    assert "readable by others" not in res.stderr


def test_audit_log_and_plan_files_are_private(seeded, tmp_path):
    mutations = cm.mutation_invocations()
    url = f"redis://:{quote(PASSWORD, safe='')}@127.0.0.1:{seeded.port}/0"
    old_umask = os.umask(0o022)  # a typical, permissive umask: pelctl must not rely on it
    try:
        res = run_pelctl(*mutations["requeue"], url=url)
    finally:
        os.umask(old_umask)
    assert res.exit_code == 0, res.stderr
    state = Path(os.environ["XDG_STATE_HOME"]) / "pelctl"
    audit = state / "audit.jsonl"
    assert audit.exists()
    assert stat.S_IMODE(audit.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) & 0o077 == 0
    line = audit.read_text().splitlines()[-1]
    assert PASSWORD not in line and quote(PASSWORD, safe="") not in line
    assert re.search(r'"server": ?"redis://(:\*\*\*@)?127\.0\.0\.1', line), line
    # A looser audit log is tightened on the next write.
    audit.chmod(0o644)
    with seeded.client(password=PASSWORD) as c:
        c.flushall()
        cm.seed(c)
    run_pelctl(*mutations["ack"], url=url)
    assert stat.S_IMODE(audit.stat().st_mode) == 0o600
    if cm.exists("apply"):
        plan = tmp_path / "p.json"
        with seeded.client(password=PASSWORD) as c:
            c.flushall()
            cm.seed(c)
        res = run_pelctl("requeue", "s", "g", "--idle", "30m", "--plan-out", str(plan), url=url)
        assert res.exit_code == 0, res.stderr
        assert stat.S_IMODE(plan.stat().st_mode) == 0o600
        assert PASSWORD not in plan.read_text()


def test_docs_and_help_show_no_real_passwords():
    """Examples in the docs and --help use placeholders or the redacted form only."""
    root = Path(__file__).resolve().parents[2]
    texts = {
        str(p): p.read_text()
        for p in [root / "README.md", *(root / "docs").glob("*.md")]
        if p.exists()
    }
    url_with_password = re.compile(r"rediss?(?:\+sentinel)?://[^\s/@`'\"]*:([^\s/@`'\"]+)@")
    allowed = {
        "***",
        "secret",
        "password",
        "PASSWORD",
        "<password>",
        "pass",
        "${REDIS_PASSWORD}",
        "$REDIS_PASSWORD",
        "p@ss",
        "password]",
    }
    bad = []
    for where, text in texts.items():
        for match in url_with_password.finditer(text):
            if match.group(1) not in allowed:
                bad.append(f"{where}: {match.group(0)}")
    assert not bad, bad
