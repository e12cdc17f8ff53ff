"""Exceptions that end a run with exit code 2 (usage or configuration)."""


class ConfigError(Exception):
    """Bad configuration: the message is one line naming the file and key."""


class MatrixError(Exception):
    """A version_matrix file breaks its schema: names the file and entry."""
