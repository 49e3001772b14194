"""Typed errors of the command layer.

Every surface maps these the same way: the CLI to an exit code and one line on stderr (plus the
hint), the TUI to a notification. ``exit_code`` is the documented exit code (docs/safety.md,
"Exit codes and results").
"""

from __future__ import annotations

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONNECT = 4
EXIT_PARTIAL = 5  # some items of a mutation failed: the CLI prints them (cli/mutate.py)
EXIT_NOT_AUDITED = 6


class PelctlError(Exception):
    """Base of every error pelctl reports to a user."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(PelctlError):
    """Bad input from the user: a duration, an id, an option combination."""

    exit_code = EXIT_USAGE


class InvalidDuration(UsageError):
    pass


class NotFound(PelctlError):
    """A stream, group or consumer that does not exist."""

    exit_code = EXIT_NOT_FOUND


class StreamNotFound(NotFound):
    pass


class GroupNotFound(NotFound):
    pass


class ConsumerNotFound(NotFound):
    """A consumer name that matches none of the group's consumers (a ``--consumer`` filter,
    a ``--to`` target): an error, never an empty success."""


class WrongType(NotFound):
    """The key exists but is not a stream: there is no stream by that name (exit 3)."""


class ConnectionFailed(PelctlError):
    """The server cannot be reached (refused, timeout, DNS, TLS handshake)."""

    exit_code = EXIT_CONNECT


class AuthFailed(ConnectionFailed):
    """Wrong password or user."""


class PermissionDenied(PelctlError):
    """The ACL user may not run a command (NOPERM). Exit 4 like the other auth failures."""

    exit_code = EXIT_CONNECT


class NeedsServerVersion(PelctlError):
    """A feature the connected server does not have."""

    def __init__(self, feature: str, needs: str, server: str) -> None:
        super().__init__(f"{feature} needs {needs}; the server is {server}")
        self.feature = feature
        self.needs = needs


class ReadOnlyRefused(PelctlError):
    """A mutation was asked for in read-only mode; refused before connecting."""

    exit_code = EXIT_USAGE


class ConfigError(UsageError):
    """The config file or a context in it is wrong."""


class OperationFailed(PelctlError):
    exit_code = EXIT_FAILED


class NotAudited(PelctlError):
    """A mutation WAS applied (its result is shown) but its audit line could not be written.

    Exit 6, never a connection error: the change happened, only the record of it is missing.
    ``path`` is the audit log, ``error`` the OS error, ``applied`` how many items changed.
    """

    exit_code = EXIT_NOT_AUDITED

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        path: str = "",
        error: OSError | None = None,
        applied: int = 0,
    ) -> None:
        super().__init__(message, hint)
        self.path = path
        self.error = error
        self.applied = applied
