"""Parameter coercion without pydantic at start-up (docs/architecture.md, "Start-up").

typer 0.29 converts every command-line value through a pydantic ``TypeAdapter``, built on
the first value a parameter sees. Importing pydantic and building the adapters is about a
third of a read command's start-up, and it buys nothing for the values pelctl's options
take: a string, a decimal count, a choice.

:func:`install` puts :class:`LazyRuntimeParam` in front of typer's own coercion. It answers
only the plain cases, where its result is exactly typer's: a ``str`` as typed, an ``int``
or ``float`` written in decimal digits within the option's range, a choice (with typer's
own matching, :func:`typer._param_types.coerce_cli_choice`), a list of strings, a flag's
bool. Anything else (a value out of range, ``1_000``, ``abc``, a choice that is not one)
goes to typer's pydantic path, built then: its result and its error message are typer's.
tests/unit/test_import_budget.py checks both halves: the same results as typer's adapters,
and no pydantic in a read command.

This leans on typer's internals (``typer.core.build_runtime_param``, ``RuntimeParam``):
pyproject pins typer below 0.30, and the import-budget test fails if the hook stops being
used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, get_args, get_origin

import typer.core
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import choice_coercion_annotation, coerce_cli_choice

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")


@dataclass(frozen=True)
class LazyRuntimeParam(RuntimeParam):
    """typer's coercion of one parameter, its pydantic adapter built only when needed."""

    descriptor: TypeDescriptor
    _full: list[RuntimeParam] = field(default_factory=list, compare=False, repr=False)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        done, result = _plain(self.descriptor, value, ctx)
        if done:
            return result
        if not self._full:  # typer's own, with its pydantic adapter
            self._full.append(build_runtime_param(self.descriptor))
        return self._full[0]._coerce_value(value, param=param, ctx=ctx)


def _plain(descriptor: Any, value: Any, ctx: Any) -> tuple[bool, Any]:
    """``(True, typer's result)`` for a plain value, ``(False, None)`` for anything else."""
    info = descriptor.parameter_info
    if info.parser is not None or descriptor.file_annotation is not None:
        return False, None
    annotation = descriptor.annotation
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        if item is str and isinstance(value, (list, tuple)) and all(type(v) is str for v in value):
            return True, list(value)
        return False, None
    if annotation is str:
        return (True, value) if type(value) is str else (False, None)
    if annotation is bool:
        return (True, value) if type(value) is bool else (False, None)
    if annotation is int or annotation is float:
        return _number(annotation, info, value)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices, case_sensitive = choice_coercion_annotation(annotation, info) or ((), True)
        try:
            return True, coerce_cli_choice(
                value, choices=choices, case_sensitive=case_sensitive, ctx=ctx
            )
        except ValueError:
            return False, None  # typer's path words the refusal
    return False, None


def _number(kind: type, info: Any, value: Any) -> tuple[bool, Any]:
    if info.clamp:
        return False, None
    if type(value) is kind:
        number = value
    elif type(value) is str and (_INT if kind is int else _FLOAT).fullmatch(value):
        number = kind(value)
    else:
        return False, None
    if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
        return False, None
    return True, number


def _build(descriptor: TypeDescriptor) -> RuntimeParam:
    return LazyRuntimeParam(
        parameter_info=descriptor.parameter_info,
        annotation=descriptor.annotation,
        descriptor=descriptor,
    )


def install() -> None:
    """Route typer's parameters through :class:`LazyRuntimeParam` (idempotent)."""
    typer.core.build_runtime_param = _build
