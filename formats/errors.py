"""The one error type every reader raises: commands turn it into one line and exit 2."""


class LogFormatError(Exception):
    """The file is not a usable quiver event log; the message says why in one line."""
