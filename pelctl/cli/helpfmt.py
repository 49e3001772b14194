"""Help screens, printed by typer's rich help with two changes (docs/output.md):

- a command lists its own arguments and options first, then the options every command
  shares (connection, output, ``--read-only``) by name in one compact "Global options"
  panel (three lines at 80 columns); what they do is in ``pelctl --help`` (kubectl points
  to ``kubectl options`` the same way);
- no type noise: flags show no ``<bool>``, an argument no ``<str>``; a value is named
  (``URL``, ``FILE``, ``TEXT``, ``INTEGER``) or its choices listed (``idle|age|...``);
- the description reflowed to the terminal: typer's rich mode keeps a docstring's line
  breaks, so lines wrapped at 88 in the source would leave one word on a line of its own
  at 80 columns. A line that starts a list item (``- ``) or a label (``Groups: ...``), or
  is indented, still starts a line.

Loaded only when a help screen is printed (rich is loaded by then anyway).
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Mapping
from typing import Any

from typer.core import TyperArgument, TyperOption

from pelctl.cli.typer_rich import rich_utils as _rich_utils

rich_utils = _rich_utils()  # typer's, without rich.markdown and rich.traceback (start-up)

GLOBAL_PANEL = "Global options"
POINTER = "pelctl --help for details"

_TYPE_WORDS = {
    "str": "TEXT",
    "int": "INTEGER",
    "int range": "INTEGER",
    "float": "FLOAT",
    "float range": "FLOAT",
    "path": "PATH",
    "file": "FILE",
}


class _ShownOption(TyperOption):
    """An option as its help shows it: no type for a flag, a word for a value; its range
    (``x>=1``) with its help, not in the narrow type column."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.metavar is not None:
            return self.metavar or None
        if self.is_flag or self.count:
            return None
        return type_word(super().display_type_rich(ctx))

    def _get_number_range_help_str(self) -> str | None:
        return None


class _ShownArgument(TyperArgument):
    """An argument as its help shows it: its name says what it is, no ``<str>``."""

    def display_type_rich(self, ctx: Any) -> str | None:
        shown = type_word(super().display_type_rich(ctx))
        return shown if shown not in (None, "TEXT", "TEXT...") else None


def type_word(shown: str | None) -> str | None:
    """``<str>`` -> ``TEXT``, ``<int range>`` -> ``INTEGER``, ``<a|b>`` -> ``a|b``."""
    if not shown:
        return None
    tail = "..." if shown.endswith("...") else ""
    inner = shown.removesuffix("...").removeprefix("<").removesuffix(">")
    if inner.startswith("list[") and inner.endswith("]"):  # a repeatable value
        inner, tail = inner[5:-1], "..."
    if inner == "bool":
        return None
    return _TYPE_WORDS.get(inner, inner) + tail


# A line that starts one of its own: a list item, a short label ("Per group: "), indented.
_OWN_LINE = re.compile(r"^(?:\s|[-*\u2022] |[A-Z][\w /-]{0,24}: )")


def reflow(help_text: str | None) -> str | None:
    """``help_text`` with the lines of each paragraph joined, but for lines of their own
    (:data:`_OWN_LINE`); ``\\b`` paragraphs and anything after ``\\f`` as typed."""
    if not help_text:
        return help_text
    text, cut, tail = inspect.cleandoc(help_text).partition("\f")
    out = []
    for para in text.split("\n\n"):
        if para.startswith("\b"):
            out.append(para)
            continue
        lines: list[str] = []
        for line in para.split("\n"):
            if lines and line.strip() and not _OWN_LINE.match(line) and lines[-1].strip():
                lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
            else:
                lines.append(line)
        out.append("\n".join(lines))
    return "\n\n".join(out) + cut + tail


def shown_param(param: Any) -> Any:  # a typer parameter
    """A copy of ``param`` that prints as :class:`_ShownOption` / :class:`_ShownArgument`
    (the command keeps its own, untouched)."""
    shown = copy.copy(param)
    if isinstance(param, TyperOption):
        limits = param._get_number_range_help_str()
        shown.__class__ = _ShownOption
        if limits:
            shown.help = f"{param.help or ''} ({limits})".strip()  # no [ ]: markup
    elif isinstance(param, TyperArgument):
        shown.__class__ = _ShownArgument
    return shown


def is_global(param: Any, shared_help: Mapping[str, str]) -> bool:
    """One of the shared options (``shared_help``: their names and help, as
    :data:`pelctl.cli.options.COMMON_PARAMS` declares them; a command's own option of the same
    name is its own)."""
    declared = shared_help.get(getattr(param, "name", None) or "")
    return declared is not None and getattr(param, "help", None) == declared


def print_help(
    command: Any,
    ctx: Any,
    *,
    compact_globals: bool,
    shared_help: Mapping[str, str],
    metavars: Mapping[str, str],
) -> None:
    """Typer's rich help of ``command`` with its parameters as shown; with
    ``compact_globals`` the shared options (``shared_help``) go to one short panel at the end,
    each with its value name from ``metavars``."""
    params = command.get_params(ctx)
    shared = [p for p in params if compact_globals and is_global(p, shared_help)]
    view = copy.copy(command)
    view.params = [shown_param(p) for p in params if p not in shared]
    view.help = reflow(command.help)
    view.add_help_option = False  # the help option is in params already
    rich_utils.rich_format_help(obj=view, ctx=ctx, markup_mode=command.rich_markup_mode)
    if shared:
        _print_globals(shared, metavars)


def _label(param: Any, metavars: Mapping[str, str]) -> str:
    short = [o for o in param.opts if not o.startswith("--")]
    long = [o for o in param.opts if o.startswith("--")]
    text = ", ".join(short + long)
    if param.secondary_opts:
        text += "/" + "/".join(param.secondary_opts)
    metavar = metavars.get(param.name)
    return f"{text} {metavar}" if metavar else text


def _print_globals(params: list[Any], metavars: Mapping[str, str]) -> None:
    """The shared options by name, in columns (three lines at 80 columns), in a panel that
    points to ``pelctl --help`` for what they do."""
    from rich.columns import Columns
    from rich.console import Console
    from rich.panel import Panel
    from rich.text import Text

    console = Console(
        width=rich_utils.MAX_WIDTH,
        force_terminal=rich_utils.FORCE_TERMINAL,
        color_system=rich_utils.COLOR_SYSTEM,
        highlight=False,
        markup=False,
        emoji=False,
    )
    names = [Text(_label(p, metavars), style=rich_utils.STYLE_OPTION) for p in params]
    console.print(
        Panel(
            Columns(names, padding=(0, 2), column_first=True),
            title=f"{GLOBAL_PANEL} ({POINTER})",
            title_align=rich_utils.ALIGN_OPTIONS_PANEL,
            border_style=rich_utils.STYLE_OPTIONS_PANEL_BORDER,
        )
    )
