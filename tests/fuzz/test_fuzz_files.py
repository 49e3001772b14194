"""Bad files, fuzzed: config files (garbage TOML, wrong types) and plan files (tampered,
truncated, made for another server). No traceback, the documented exit code, and a refused
plan changes nothing on the server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pelctl.demo import scenario as sc
from tests.fuzz.conftest import FUZZ, assert_unchanged, check_run, count
from tests.support import servers as sv
from tests.support.state import ServerState, differences, snapshot
from tests.support.state import assert_unchanged as state_assert_unchanged
from tests.topologies import commands as cm
from tests.topologies.runner import run_pelctl

KNOWN_KEYS = [
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
]
toml_scalar = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
    st.just("redis://127.0.0.1:1/0"),
    st.just("rediss://127.0.0.1:1/0"),
    st.just("~/x.pem"),
)
toml_value = st.recursive(
    toml_scalar,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(st.characters(whitelist_categories=("L", "N")), min_size=1, max_size=8),
            inner,
            max_size=3,
        )
    ),
    max_leaves=6,
)


def _toml_key(k: str) -> str:
    return json.dumps(k)  # a TOML basic string is a valid quoted key


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if not isinstance(value, float) or value == value else "nan"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{_toml_key(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@st.composite
def config_text(draw) -> str:
    kind = draw(st.sampled_from(["garbage", "bytes", "contexts", "top"]))
    if kind == "garbage":
        return draw(st.text(max_size=300))
    if kind == "bytes":
        return draw(st.binary(max_size=300)).decode("latin-1")
    if kind == "top":
        doc = draw(
            st.dictionaries(
                st.sampled_from(["current-context", "contexts", "x"]), toml_value, max_size=3
            )
        )
        return "\n".join(f"{_toml_key(k)} = {_toml(v)}" for k, v in doc.items())
    names = draw(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3, unique=True))
    lines = []
    current = draw(st.one_of(st.none(), st.sampled_from(names), toml_scalar))
    if current is not None:
        lines.append(f"current-context = {_toml(current)}")
    for name in names:
        lines.append(f"[contexts.{_toml_key(name)}]")
        keys = draw(st.lists(st.sampled_from(KNOWN_KEYS + ["bogus"]), max_size=5, unique=True))
        for key in keys:
            lines.append(f"{key} = {_toml(draw(toml_value))}")
    return "\n".join(lines)


@FUZZ.__class__(FUZZ, max_examples=150)
@given(text=config_text())
@example('current-context = "a"\n[contexts.a]\nurl = 5\n')
@example('[contexts.a]\nread_only = "yes"\n')
@example("[contexts]\na = 1\n")
@example("\x00\x01\x02")
def test_config_files(fuzz_server, baseline, tmp_path, text):
    """Any config file: `config show` and `streams` either work or fail with one usage
    line (exit 2); a URL or TLS setting that cannot connect is exit 4."""
    count("config files")
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    os.chmod(path, 0o600)
    for args in (["config", "show", "-o", "json"], ["config", "contexts"]):
        check_run(run_pelctl(*args), {0, 2})
    res = run_pelctl("streams", env={"PELCTL_TIMEOUT": "2s"})
    check_run(res, {0, 2, 4})
    res = run_pelctl("streams", url=fuzz_server.url)
    check_run(res, {0, 2, 4})
    assert_unchanged(fuzz_server, baseline)


# -- plan files ------------------------------------------------------------------------------


# Plans are sealed with the user's plan key; the module-scoped plan is made before the
# per-test state directory exists, so every run here shares one key through the environment.
PLAN_KEY = {"PELCTL_PLAN_KEY": "fuzz-plan-key-0123456789abcdef0123456789abcdef"}


@pytest.fixture(scope="module")
def plan_doc(fuzz_server, tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    res = run_pelctl(
        "requeue",
        "s",
        "g",
        "--idle",
        "30m",
        "--plan-out",
        str(path),
        url=fuzz_server.url,
        env=PLAN_KEY,
    )
    assert res.exit_code == 0, res.stderr
    return json.loads(path.read_text())


def _reseal(doc: dict) -> dict:
    from pelctl.core.plan.sealing import seal

    return seal(doc, PLAN_KEY["PELCTL_PLAN_KEY"].encode())


def _restore(server: sv.Server, baseline: ServerState) -> None:
    """Put the server back byte-for-byte (RESTORE of the baseline DUMPs; all in db 0)."""
    assert {db for _node, db, _key in baseline} == {0}
    dumps = {key: st.dump for (_node, _db, key), st in baseline.items()}
    with server.client() as c:
        for key in c.scan_iter(count=1000):
            if key not in dumps:
                c.delete(key)
        for key, dump in dumps.items():
            c.restore(key, 0, dump, replace=True)


json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=5,
)


@st.composite
def tampered(draw, doc: dict) -> bytes:
    """A damaged plan. Most damage breaks the seal; ``reseal`` signs the damaged plan again
    with the key (what the key's holder could forge), so the validators behind the seal
    are fuzzed too."""
    text = json.dumps(doc, indent=1).encode()
    kind = draw(st.sampled_from(["truncate", "flip", "field", "item", "drop", "garbage"]))
    reseal = draw(st.booleans())
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text) - 1))]
    if kind == "flip":
        i = draw(st.integers(0, len(text) - 1))
        return text[:i] + bytes([draw(st.integers(0, 255))]) + text[i + 1 :]
    if kind == "garbage":
        return draw(st.binary(max_size=200))
    doc = json.loads(text)
    if kind == "field":
        doc[draw(st.sampled_from(sorted(doc)))] = draw(json_value)
    elif kind == "drop":
        doc.pop(draw(st.sampled_from(sorted(doc))))
    elif doc.get("items"):
        item = doc["items"][draw(st.integers(0, len(doc["items"]) - 1))]
        item[draw(st.sampled_from(sorted(item)))] = draw(json_value)
    if reseal:
        try:
            doc = _reseal(doc)
        except ValueError:  # a value the canonical form cannot hold (NaN): leave it unsealed
            pass
    return json.dumps(doc).encode()


@FUZZ.__class__(FUZZ, max_examples=150)
@given(data=st.data())
def test_tampered_plan_files(fuzz_server, baseline, plan_doc, tmp_path, data):
    """A damaged plan is refused (exit 2) or, if it was sealed again and still reads as a
    plan for this server, re-verified entry by entry; a refused plan changes nothing."""
    count("plan files (tampered, truncated)")
    blob = data.draw(tampered(plan_doc))
    path = tmp_path / "plan.json"
    path.write_bytes(blob)
    res = run_pelctl("apply", str(path), "--yes", url=fuzz_server.url, env=PLAN_KEY)
    check_run(res)
    changed = bool(differences(baseline, snapshot(fuzz_server)))
    if changed:
        assert res.exit_code in (0, 5), res.stderr  # only an accepted plan may change things
        _restore(fuzz_server, baseline)
    if res.exit_code == 2:
        assert not changed


def test_plan_for_another_server_is_refused(fuzz_server, baseline, plan_doc, tmp_path):
    other = sv.spawn(fuzz_server.binary, [], port=sv.free_port({fuzz_server.port}))
    try:
        with other.client() as c:
            cm.seed(c)
        before = snapshot(other)
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(plan_doc))
        res = run_pelctl("apply", str(path), "--yes", url=other.url, env=PLAN_KEY)
        check_run(res, {2})
        assert "this plan was made on" in res.stderr, res.stderr
        state_assert_unchanged(before, other)
        # The same file still applies where it was made.
        res = run_pelctl("apply", str(path), "--dry-run", url=fuzz_server.url, env=PLAN_KEY)
        check_run(res, {0})
    finally:
        other.stop()
    assert_unchanged(fuzz_server, baseline)


def test_plan_after_the_stream_was_recreated_is_refused(fuzz_server, baseline, plan_doc, tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan_doc))
    try:
        with fuzz_server.client() as c:
            c.delete("s")
            # Same name, new stream: its entries-added counter starts again (5 < 40).
            sc.add_entries(c, b"s", 5)
            sc.create_group(c, b"s", b"g")
            sc.deliver(c, b"s", b"g", b"dead", 5)
        before = snapshot(fuzz_server)
        res = run_pelctl("apply", str(path), "--yes", url=fuzz_server.url, env=PLAN_KEY)
        check_run(res, {2, 3})
        state_assert_unchanged(before, fuzz_server)
    finally:
        _restore(fuzz_server, baseline)
