"""Text of a renderer's table through the CLI's own output formats (no terminal, no server)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from typing import Any

from pelctl.render.table import TableData


def render(fmt: str, data: TableData, records: Sequence[dict[str, Any]] | None = None) -> str:
    """What ``pelctl ... -o FMT`` prints for one table (``plain`` in a pipe)."""
    from pelctl.cli.output import Output

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        Output(fmt).table(data, records)
    return out.getvalue()
