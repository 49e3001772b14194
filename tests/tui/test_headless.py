"""The dashboard's headless modules stay free of textual and rich; `pelctl --help` loads no
textual."""

from __future__ import annotations

import subprocess
import sys


def test_headless_modules_load_without_textual_or_rich():
    code = (
        "import sys\n"
        "import pelctl.tui, pelctl.tui.source, pelctl.core.aggregate, pelctl.tui.actions,"
        " pelctl.tui.operations, pelctl.tui.jumps\n"
        "bad = [m for m in ('textual', 'rich') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pelctl_help_does_not_import_textual():
    code = (
        "import sys\n"
        "from pelctl.cli.app import app\n"
        "import pelctl.cli.tui\n"
        "assert 'textual' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
