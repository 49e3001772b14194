"""How the dashboard says a failure: whatever a worker raised, as a typed error, and its text
with the hint on the next line. (Nothing here shows it: the notification, or the view's
body, escapes it like any data.)"""

from __future__ import annotations

from pelctl.base.errors import OperationFailed, PelctlError


def typed(err: Exception) -> PelctlError:
    """``err`` when it is one of pelctl's errors; anything else (a bug) as an
    :class:`OperationFailed` that names it, so it is reported and the dashboard lives on."""
    if isinstance(err, PelctlError):
        return err
    return OperationFailed(f"unexpected {type(err).__name__}: {err}")


def explained(err: PelctlError) -> str:
    """The error's message, and its hint on the next line when it has one."""
    hint = f"\n{err.hint}" if err.hint else ""
    return f"{err.message}{hint}"
