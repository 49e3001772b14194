"""The plan file and the plan key on disk, without a server: what ``save`` refuses and how it
writes (a temp file in the target's directory, complete and mode 0600 before the rename,
nothing left behind on a failure), how ``load`` bounds what it reads, how the key file is
made and read. Checked with os.stat, directory listings and exact messages."""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from pelctl.base.errors import ConfigError, OperationFailed, UsageError
from pelctl.base.paths import plan_key_path
from pelctl.core import mutations as m
from pelctl.core import plan as plans

KEY = "k" * 32
PLAN = m.Plan(
    action="requeue",
    stream=b"orders",
    group=b"billing",
    items=(m.PlanItem(b"1-0", b"c1", 5_000, 2, "requeued"),),
    targets=m.Targets(min_idle_ms=5),
    server="redis://h:1/0",
    server_id="ab" * 20,
    db=0,
    created_ms=1_700_000_000_000,
)
TOO_BIG = (
    "narrow it (--limit N, --consumer, --idle: several smaller plans), or run the repair "
    "directly after a --dry-run"
)


@pytest.fixture
def key(monkeypatch) -> None:
    monkeypatch.setenv(plans.KEY_ENV, KEY)


def refusal(plan: m.Plan, path: Path) -> tuple[str, str | None]:
    with pytest.raises(UsageError) as err:
        plans.save(plan, path)
    assert err.value.exit_code == 2
    assert not path.exists()
    return err.value.message, err.value.hint


# -- save ------------------------------------------------------------------------------------


def test_save_refusals_are_exact(key, tmp_path) -> None:
    path = tmp_path / "p.json"
    assert refusal(replace(PLAN, action="dlq-replay"), path) == (
        "dlq-replay plans cannot be saved to a file (plan files hold claim, ack, requeue, "
        "dlq-move, consumers-prune, ghosts-fix, trim)",
        None,
    )
    assert refusal(replace(PLAN, server_id=""), path) == (
        "the server does not report a run_id (INFO server): a plan file could not be bound to it",
        "run the repair directly, after a --dry-run",
    )
    row = PLAN.items[0]
    many = tuple(replace(row, id=f"{i}-0".encode()) for i in range(1, plans.MAX_ITEMS + 2))
    assert refusal(replace(PLAN, items=many), path) == (
        "the plan has 50,001 items, more than the 50,000 a plan file may hold",
        TOO_BIG,
    )


def test_save_and_load_at_both_caps_at_once(key, tmp_path) -> None:
    """50,000 items taking exactly 8,388,608 bytes are saved and loaded back; one byte more
    is refused, and nothing is written."""
    row = PLAN.items[0]
    n = plans.MAX_ITEMS

    def sized(note: int, pad: int = 0) -> m.Plan:
        return replace(
            PLAN,
            items=tuple(
                replace(row, id=f"{i}-0".encode(), note="n" * (note + (i < pad))) for i in range(n)
            ),
        )

    def size(plan: m.Plan) -> int:
        return len(plans.dumps(plans.seal(plans.to_json(plan))))

    # notes of ASCII letters take one byte a character: the same note on every item, and one
    # more character on the first ``pad`` items
    note, pad = divmod(plans.MAX_BYTES - size(sized(0)), n)
    assert 0 < note < 100 and 0 <= pad < n
    exact = sized(note, pad)
    path = plans.save(exact, tmp_path / "p.json")
    assert os.stat(path).st_size == 8_388_608
    assert plans.load(path) == exact
    over = tmp_path / "over.json"
    assert refusal(sized(note, pad + 1), over) == (
        "the plan would take 8,388,609 bytes, more than the 8,388,608 a plan file may",
        TOO_BIG,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]


def test_save_writes_a_whole_private_file_then_renames_it(key, tmp_path, monkeypatch) -> None:
    """The temp file is in the target's directory (a rename across file systems is not
    atomic, and fails), hidden and named as a plan, complete and mode 0600 when it is
    renamed; the directories missing on the way are made."""
    target = tmp_path / "a" / "b" / "plan.json"
    renamed: list[tuple[Path, Path, int, bytes]] = []
    real_replace = os.replace

    def spy(src, dst) -> None:
        src = Path(src)
        renamed.append((src, Path(dst), stat.S_IMODE(os.stat(src).st_mode), src.read_bytes()))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    assert plans.save(PLAN, target) == target
    [(src, dst, mode, body)] = renamed
    assert (src.parent, dst, mode) == (target.parent, target, 0o600)
    assert src.name.startswith(".plan-") and src.name.endswith(".json")
    assert body == target.read_bytes()
    assert body.endswith(b"\n}\n") and plans.load(target) == PLAN
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert os.listdir(target.parent) == ["plan.json"]


def test_a_failed_save_leaves_nothing_behind(key, tmp_path, monkeypatch) -> None:
    # the directory cannot be made: a file stands where it should be
    (tmp_path / "f").write_text("x")
    target = tmp_path / "f" / "p.json"
    with pytest.raises(OperationFailed) as err:
        plans.save(PLAN, target)
    assert (err.value.message, err.value.exit_code) == (
        f"cannot write the plan file {target}: File exists",
        1,
    )
    # the rename fails: a directory stands where the file should be
    target = tmp_path / "d"
    target.mkdir()
    with pytest.raises(OperationFailed) as err:
        plans.save(PLAN, target)
    assert err.value.message == f"cannot write the plan file {target}: Is a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "f"]
    assert os.listdir(target) == []
    # interrupted (Ctrl-C) before the rename: the old plan stays whole, no temp file is left
    target = tmp_path / "p.json"
    target.write_bytes(b"the old plan")

    def interrupted(src, dst) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        plans.save(PLAN, target)
    assert target.read_bytes() == b"the old plan"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "f", "p.json"]


# -- load ------------------------------------------------------------------------------------


def test_load_reads_the_last_byte_of_a_full_size_file(key, tmp_path) -> None:
    path = tmp_path / "p.json"
    body = b'{"format": "x"'
    path.write_bytes(body + b" " * (plans.MAX_BYTES - len(body) - 1) + b"}")
    assert os.stat(path).st_size == plans.MAX_BYTES
    with pytest.raises(ConfigError) as err:
        plans.load(path)  # read whole: a valid JSON object, then refused for its format
    assert err.value.message == f'{path} is not a valid pelctl plan (no "format": "pelctl-plan")'


def test_load_from_a_pipe_reads_at_most_one_byte_more_than_a_plan_may_take(key, tmp_path):
    """A pipe (``--plan <(...)``) has no size: load reads MAX_BYTES + 1 bytes and refuses,
    without waiting for the writer to finish (a writer that never ends must not make pelctl
    read forever)."""
    fifo = tmp_path / "plan.pipe"
    os.mkfifo(fifo)
    loaded = threading.Event()
    closed_before_load_returned: list[bool] = []

    def writer() -> None:
        with open(fifo, "wb") as fh:
            try:
                fh.write(b" " * (plans.MAX_BYTES + 1))
                fh.flush()
            except BrokenPipeError:
                pass
            # keep the pipe open until load returns (a generous deadline if it never does)
            closed_before_load_returned.append(not loaded.wait(60))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(plans.PlanRefused) as err:
            plans.load(fifo)
    finally:
        loaded.set()
        thread.join(90)
    assert err.value.message == (
        f"plan file {fifo} is larger than the 8,388,608 bytes a plan may take"
    )
    assert closed_before_load_returned == [False]


# -- the key ---------------------------------------------------------------------------------


@pytest.fixture
def key_path(monkeypatch, tmp_path) -> Path:
    monkeypatch.delenv(plans.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return plan_key_path()


def test_short_keys_are_refused_with_their_hint(monkeypatch, key_path) -> None:
    monkeypatch.setenv(plans.KEY_ENV, "k" * 31)
    with pytest.raises(UsageError) as usage:
        plans.plan_key()
    assert (usage.value.message, usage.value.hint) == (
        f"{plans.KEY_ENV} is too short (31 characters): a plan key needs at least 32",
        "make one with: openssl rand -hex 32",
    )
    monkeypatch.delenv(plans.KEY_ENV)
    key_path.parent.mkdir(parents=True)
    key_path.write_text("k" * 31 + "\n")
    with pytest.raises(ConfigError) as err:
        plans.plan_key()
    assert (err.value.message, err.value.hint) == (
        f"the plan key {key_path} is damaged (shorter than 32 characters)",
        "delete it: the next --plan-out makes a new one (plans sealed with the old key will no "
        "longer apply)",
    )
    key_path.write_text("k" * 32 + "\n")  # exactly the minimum
    assert plans.plan_key() == (b"k" * 32, str(key_path))


def test_the_key_is_made_beside_it_then_linked(monkeypatch, key_path) -> None:
    """The new key is written to a hidden temp file in the key's own directory (a hard link
    cannot cross file systems), then linked to its name."""
    linked: list[tuple[Path, Path, bytes]] = []
    real_link = os.link

    def spy(src, dst) -> None:
        linked.append((Path(src), Path(dst), Path(src).read_bytes()))
        real_link(src, dst)

    monkeypatch.setattr(os, "link", spy)
    key, where = plans.plan_key(create=True)
    [(src, dst, body)] = linked
    assert (src.parent, dst, where) == (key_path.parent, key_path, str(key_path))
    assert src.name.startswith(".plan-key-")
    assert body == key + b"\n" == key_path.read_bytes()
    assert os.listdir(key_path.parent) == ["plan.key"]


def test_a_key_that_cannot_be_made_names_why(monkeypatch, key_path) -> None:
    hint = f"fix the state directory's permissions, or set {plans.KEY_ENV}"
    # a dangling link where the key should be: not found to read, in the way to link
    key_path.parent.mkdir(parents=True)
    key_path.symlink_to(key_path.parent / "nowhere")
    with pytest.raises(OperationFailed) as err:
        plans.plan_key(create=True)
    assert (err.value.message, err.value.hint) == (
        f"cannot create the plan key {key_path}: No such file or directory",
        hint,
    )
    assert os.listdir(key_path.parent) == ["plan.key"]  # no temp file left
    # another pelctl made a key at the same moment, and it cannot be read
    key_path.unlink()
    real_link = os.link

    def racing(src, dst) -> None:
        Path(dst).write_bytes(b"\xff" * 40)
        real_link(src, dst)

    monkeypatch.setattr(os, "link", racing)
    with pytest.raises(OperationFailed) as err:
        plans.plan_key(create=True)
    assert (err.value.message, err.value.hint) == (
        f"cannot create the plan key {key_path}: cannot read the plan key {key_path}: 'utf-8' "
        "codec can't decode byte 0xff in position 0: invalid start byte",
        hint,
    )


def test_reading_the_key_tightens_only_a_readable_key_of_ones_own(key_path) -> None:
    key_path.parent.mkdir(parents=True)
    key_path.write_text("k" * 40)
    os.chmod(key_path, 0o400)  # already private, and read-only on purpose: left so
    assert plans.plan_key() == (b"k" * 40, str(key_path))
    assert stat.S_IMODE(os.stat(key_path).st_mode) == 0o400
    # a key of another user (a shared key, group-readable on purpose) is never changed
    if os.getuid() == 0:
        os.chmod(key_path, 0o644)
        os.chown(key_path, 65534, 65534)
        theirs, text = key_path, "k" * 40
    else:  # a file that is not ours: /etc/passwd, root's, world-readable
        theirs = Path("/etc/passwd")
        key_path.unlink()
        key_path.symlink_to(theirs)
        text = theirs.read_text()[:4_096].strip()
    before = os.stat(theirs)
    assert before.st_uid != os.getuid() and stat.S_IMODE(before.st_mode) & 0o077
    assert plans.plan_key() == (text.encode(), str(key_path))
    assert stat.S_IMODE(os.stat(theirs).st_mode) == stat.S_IMODE(before.st_mode)
