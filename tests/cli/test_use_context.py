"""``pelctl config use-context NAME`` and ``config current-context``.

use-context edits the ``current-context`` line of the TOML file and nothing else: comments,
order, spacing, the file's mode and a symlink survive; an unknown name is refused (exit 2,
the known contexts in the hint) and leaves the file alone.
"""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path

import pytest

CONFIG = textwrap.dedent("""\
    # my pelctl contexts
    # (edited by hand)

    current-context = "local"   # the laptop by default

    [contexts.local]
    url = "redis://127.0.0.1:6379/0"
    description = "my laptop"   # keep me

    [contexts.staging]
    url = "rediss://redis.staging.internal:6380/0"
    group = "workers"
    read_only = true
    """)


def write_config(text: str, mode: int = 0o600) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "pelctl" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    path.chmod(mode)
    return path


def test_use_context_changes_only_the_current_context_line(cli) -> None:
    path = write_config(CONFIG, mode=0o640)
    res = cli("config", "use-context", "staging")
    assert res.exit_code == 0, res.stderr
    assert "switched to context staging" in res.stdout
    assert path.read_text() == CONFIG.replace(
        'current-context = "local"   #', 'current-context = "staging"   #'
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert cli("config", "current-context").stdout == "staging\n"
    shown = cli("config", "show", "-o", "json").json
    assert (shown["context"], shown["default_group"], shown["read_only"]) == (
        "staging",
        "workers",
        True,
    )
    doc = cli("config", "use-context", "local", "-o", "json").json
    assert doc["current_context"] == "local" and doc["previous"] == "staging"
    assert path.read_text() == CONFIG


def test_an_unknown_context_is_refused_and_the_file_is_untouched(cli) -> None:
    path = write_config(CONFIG)
    res = cli("config", "use-context", "prod")
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        f"error: no context named 'prod' in {path}",
        "hint: known contexts: local, staging",
    ]
    assert path.read_text() == CONFIG
    path.unlink()
    res = cli("config", "use-context", "local")
    assert res.exit_code == 2 and "(no such file)" in res.stderr and "none" in res.stderr


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # a header comment block stays on top
        (
            "# header\n\n[contexts.a]\nurl = 'redis://h'\n",
            "# header\n\ncurrent-context = \"a\"\n\n[contexts.a]\nurl = 'redis://h'\n",
        ),
        # no header: the key goes first
        (
            "[contexts.a]\nurl = 'redis://h'\n",
            "current-context = \"a\"\n\n[contexts.a]\nurl = 'redis://h'\n",
        ),
        # CRLF line endings and a literal string value, a comment after it
        (
            "current-context = 'b' # x\r\n[contexts.a]\r\n[contexts.b]\r\n",
            'current-context = "a" # x\r\n[contexts.a]\r\n[contexts.b]\r\n',
        ),
        # a quoted key; the line inside the table is another table's key, left alone
        (
            '"current-context"="b"\n[contexts.a]\n[contexts.b]\ndescription = "x"\n',
            '"current-context"="a"\n[contexts.a]\n[contexts.b]\ndescription = "x"\n',
        ),
    ],
)
def test_the_line_is_edited_or_added_in_place(cli, before: str, after: str) -> None:
    path = write_config(before)
    res = cli("config", "use-context", "a")
    assert res.exit_code == 0, res.stderr
    assert path.read_bytes().decode() == after


def test_a_name_that_needs_escaping_and_a_symlinked_file(cli, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "pelctl.toml"
    real.parent.mkdir()
    real.write_text('[contexts."a \\"quoted\\" one"]\n[contexts.b]\n')
    link = write_config("")
    link.unlink()
    link.symlink_to(real)
    res = cli("config", "use-context", 'a "quoted" one')
    assert res.exit_code == 0, res.stderr
    assert link.is_symlink()  # the link is kept, its target edited
    assert real.read_text().startswith('current-context = "a \\"quoted\\" one"\n')
    assert cli("config", "current-context").stdout == 'a "quoted" one\n'


def test_an_edit_that_would_change_anything_else_is_refused(cli) -> None:
    """A multi-line string of the root table holding a look-alike line: the textual edit
    would change the string, the re-parse sees it, and nothing is written."""
    text = 'note = """\ncurrent-context = "b"\n"""\n[contexts.a]\n[contexts.b]\n'
    path = write_config(text)
    res = cli("config", "use-context", "a")
    assert res.exit_code == 2
    assert "without changing other content" in res.stderr
    assert path.read_text() == text


def test_current_context_without_one_says_how_to_choose(cli) -> None:
    write_config("[contexts.a]\n")
    res = cli("config", "current-context")
    assert res.exit_code == 1 and res.stdout == ""
    assert "error: no current-context in" in res.stderr
    assert "pelctl config use-context NAME" in res.stderr
    res = cli("config", "use-context", "a", env={"PELCTL_CONTEXT": "b"})
    assert res.exit_code == 0
    assert "warning: PELCTL_CONTEXT=b is set: it wins over current-context (a)" in res.stderr
