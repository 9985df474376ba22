"""The typed errors every layer raises; only the CLI (quiver/cli.py) turns them into one line and an exit code."""


class QuiverError(Exception):
    """An input or option quiver cannot use; the message says why in one line."""

    exit_code = 2


class LogFormatError(QuiverError):
    """The file is not a usable quiver event log."""


class UsageError(QuiverError):
    """A command line, option or file that the command cannot work with (missing, unwritable, unknown)."""
