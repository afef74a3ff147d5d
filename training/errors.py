"""What a ``whist`` subcommand raises to end with a message and an exit status.

The command line (:mod:`training.cli`) prints :class:`CommandError` as
``whist <command>: error: <message>`` and :class:`Interrupted` as
``whist <command>: interrupted: <message>``, then exits with the error's ``status``. Code below
the command line raises them instead of printing, so every subcommand reports alike.
"""

from __future__ import annotations


class CommandError(Exception):
    """A usage or input error of a subcommand (exit status ``status``, 2 by default).

    Args:
        message: one line saying what is wrong and, where possible, how to fix it.
        status: the process exit status (2: bad usage or input; 1: the command ran but its
            result is a failure, e.g. a record that does not replay).
    """

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class Interrupted(CommandError):
    """Ctrl-C or SIGTERM stopped the command; the message says what was kept (exit status 130)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=130)
