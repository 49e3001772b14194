"""The schemas themselves: valid JSON Schema 2020-12, strict, and one type per key.

"One meaning per key" cannot be checked by a program, but its most common breach can: a key
that is a number in one output and a list (or an object) in another (``failed``, ``groups``,
``dlq`` before the one vocabulary). Every ``properties`` entry of every schema is collected
and each key must have one JSON type wherever it appears (``null`` aside; maps keyed by
data, such as ``outcomes`` or ``fields``, have no fixed keys and are not collected).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.schemas.checker import SCHEMAS, documents, errors, resolve

NAMES = sorted(p.name for p in SCHEMAS.glob("*.json"))


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_is_valid_2020_12_and_its_references_resolve(name: str) -> None:
    doc = documents()[name]
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == name
    Draft202012Validator.check_schema(doc)

    def refs(node: Any, base: str) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                resolve(node["$ref"], base)  # KeyError when it points nowhere
            for value in node.values():
                refs(value, base)
        elif isinstance(node, list):
            for value in node:
                refs(value, base)

    refs(doc, name)


def _types(schema: Any, base: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """The JSON types a subschema allows (through $ref, oneOf/anyOf/allOf, enum, const)."""
    if not isinstance(schema, dict):
        return set()
    out: set[str] = set()
    if "$ref" in schema and schema["$ref"] not in seen:
        target, where = resolve(schema["$ref"], base)
        out |= _types(target, where, seen | {schema["$ref"]})
    kind = schema.get("type")
    if isinstance(kind, str):
        out.add(kind)
    elif isinstance(kind, list):
        out.update(kind)
    for value in schema.get("enum", []) + ([schema["const"]] if "const" in schema else []):
        out.add(_json_type(value))
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in schema.get(key, []):
            out |= _types(sub, base, seen)
    out.discard("null")
    return {"number" if t == "integer" else t for t in out}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def key_types() -> dict[str, dict[str, set[str]]]:
    """key -> {schema where it appears: types}."""
    found: dict[str, dict[str, set[str]]] = defaultdict(dict)

    def walk(node: Any, name: str) -> None:
        if isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                kinds = _types(sub, name)
                if kinds:
                    found[key].setdefault(name, set()).update(kinds)
            for value in node.values():
                walk(value, name)
        elif isinstance(node, list):
            for value in node:
                walk(value, name)

    for name, doc in documents().items():
        walk(doc, name)
    return found


def test_one_type_per_key_across_every_output() -> None:
    clashes = {
        key: where
        for key, where in key_types().items()
        if len(set().union(*where.values())) > 1 or any(len(t) > 1 for t in where.values())
    }
    assert not clashes, json.dumps(
        {k: {s: sorted(t) for s, t in v.items()} for k, v in clashes.items()}, indent=1
    )


def test_the_vocabulary_keys_mean_one_thing() -> None:
    """The keys one vocabulary fixed (docs/formats.md, "One vocabulary"): a consumer's name is
    always ``consumer``; ``dlq`` is always a dead-letter stream's name; no output keeps the old
    spellings."""
    types = key_types()
    assert set().union(*types["consumer"].values()) == {"string"}
    assert set().union(*types["dlq"].values()) == {"string"}
    for old in ("owner", "label", "name", "failed_total", "command_name"):
        assert old not in types, f"{old!r} is still a key in {sorted(types[old])}"
    assert set().union(*types["failed"].values()) == {"array"}
    assert set().union(*types["failed_count"].values()) == {"number"}


def test_objects_we_own_are_closed() -> None:
    """Every object schema with fixed properties says what else it allows: nothing
    (``additionalProperties``/``unevaluatedProperties`` false), or it is a map of data."""
    open_objects = []

    def walk(node: Any, name: str, path: str) -> None:
        if isinstance(node, dict):
            closed = node.get("additionalProperties") is False or (
                node.get("unevaluatedProperties") is False
            )
            if "properties" in node and not closed and not _closed_by_parent(path):
                open_objects.append(f"{name}:{path}")
            for key, value in node.items():
                walk(value, name, f"{path}/{key}")
        elif isinstance(node, list):
            for n, value in enumerate(node):
                walk(value, name, f"{path}/{n}")

    for name, doc in documents().items():
        walk(doc, name, "")
    # Open on purpose: a decoder's own keys; a log line's event fields; pieces closed by
    # the schema that uses them (unevaluatedProperties on the referrer).
    allowed = {
        "common.json:/$defs/decoded/oneOf/1",
        "reclaim-log.json:",
        "exporter-log.json:",
        "repair-result.json:/$defs/counts",
        "trim.json:/$defs/counts",
        "audit-line.json:/$defs/who",
        "audit-line.json:/$defs/dlq_params/properties/targets",
        "audit-line.json:/$defs/dlq_params/properties/options",
        "dlq-list.json:/$defs/entry",
        "dlq-show.json:",
        "plan.json:/$defs/targets_keys",
        "plan.json:/$defs/options_keys",
        "histogram.json:/$defs/record",
    }
    assert sorted(set(open_objects) - allowed) == []


def _closed_by_parent(path: str) -> bool:
    # oneOf branches of histogram.json#/$defs/record close themselves; if/then/else only
    # narrow the properties of the (closed) object they sit in.
    parts = path.split("/")
    return ("/oneOf/" in path and path.startswith("/$defs/record")) or bool(
        {"if", "then", "else"} & set(parts)
    )


def test_a_renamed_key_fails_its_schema() -> None:
    """The schemas catch a renamed key: a valid pending entry with ``owner`` for
    ``consumer`` fails, as does a stream row with the old boolean ``dlq``."""
    entry = {"id": "1-0", "consumer": "c", "idle_ms": 5, "deliveries": 1}
    assert errors("pending.json", entry) == []
    old = {("owner" if k == "consumer" else k): v for k, v in entry.items()}
    assert errors("pending.json", old)
    row = {
        "stream": "s",
        "length": 1,
        "group_count": 0,
        "pending": 0,
        "lag": None,
        "readable": None,
        "trimmed_unread": None,
        "oldest_pending_age_ms": None,
        "is_dlq": False,
    }
    assert errors("streams.json", row) == []
    assert errors("streams.json", {**{k: v for k, v in row.items() if k != "is_dlq"}, "dlq": False})
