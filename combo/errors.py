"""Errors raised by combo.

Every error a user can cause is a :class:`ComboError` whose message names the
file, the line and the fix. The command line prints that one message to
stderr and exits with code 2 (a traceback only with ``--debug``).
"""

from __future__ import annotations

from typing import Optional


class ComboError(Exception):
    """Base class of every error combo raises on purpose."""

    exit_code = 2


class InputError(ComboError, ValueError):
    """Bad input data: names the file and (when known) the 1-based line."""

    def __init__(self, message: str, path: Optional[str] = None,
                 line: Optional[int] = None, fix: Optional[str] = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.fix = fix
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        text = where + message
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


class OptionError(ComboError, ValueError):
    """An unknown metric, an unknown option or an option out of range."""


class ResourceMissing(ComboError, RuntimeError):
    """An optional resource (WordNet, a model, an extra package) is not installed.

    The message carries the command that installs it.
    """

    def __init__(self, resource: str, install: str):
        self.resource = resource
        self.install = install
        super().__init__(f"{resource} is not available here; install it with: {install}")


class ChecksumError(ComboError):
    """A downloaded or local data file does not match its pinned SHA-256."""


class BackendError(ComboError):
    """The parallel backend cannot run the work: unreachable scheduler, a worker that died."""


def one_line(message) -> str:
    """An error message on one line (a multi-line fix is joined with '; ')."""
    return "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
