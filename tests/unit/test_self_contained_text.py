"""Text stands on its own: the next maintainer has neither the product spec nor the issue
tracker, so no code, comment, test name or page points to them ("SPEC" and a section sign,
"issue" and a number). Say the why, or link a page in docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHERE = ("pelctl", "docs", "benchmarks", "tools", "tests", "README.md", "CHANGELOG.md")
SUFFIXES = {".py", ".md", ".toml", ".lua", ".tcss", ".json", ".html", ".j2", ".sh", ".txt"}
POINTER = re.compile("SPEC" + r" §|\b[Ii]ssues? [0-9]+")


def _files() -> list[Path]:
    found: list[Path] = []
    for name in WHERE:
        path = ROOT / name
        if path.is_file():
            found.append(path)
            continue
        found += [
            p
            for p in path.rglob("*")
            if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts
        ]
    return found


def test_no_pointer_to_the_spec_or_the_issue_tracker() -> None:
    files = _files()
    assert len(files) > 300  # the walk found the tree
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for path in files
        for n, line in enumerate(path.read_text("utf-8", "replace").splitlines(), 1)
        if POINTER.search(line)
    ]
    assert not hits, "say the why or link a docs/ page instead:\n" + "\n".join(hits)
