"""Exceptions with messages a user can act on."""

from __future__ import annotations


class DigirlError(Exception):
    """Base class for errors raised deliberately by digirl."""


class ConfigError(DigirlError):
    """A configuration is invalid (unknown key, wrong type, incompatible options)."""


class DataError(DigirlError):
    """A dataset or checkpoint file is missing, corrupt or incompatible. The message names the file."""


class StorageError(DataError, OSError):
    """The operating system refused to read or write a run's or dataset's files (disk full, read-only
    file system, a path component that is a file, permission). The message names the path and the
    problem; ``errno`` is the original one, and ``except OSError`` still catches it."""

    @classmethod
    def of(cls, e: OSError, path: object, what: str) -> StorageError:
        """``"PATH: cannot WHAT: STRERROR"`` for ``e`` (its own file name when it has one)."""
        where = e.filename if e.filename is not None else path
        err = cls(f"{where}: cannot {what}: {e.strerror or e}")
        err.errno, err.strerror, err.filename = e.errno, e.strerror, where
        return err

    def __str__(self) -> str:  # the message, not OSError's "[Errno N] ..." form
        return str(self.args[0]) if self.args else ""


class UnsupportedInstructionError(DigirlError):
    """An instruction that no task family of the environment understands."""


class EnvFailure(DigirlError):
    """The environment itself failed (crash, hang, lost device); the episode is not the agent's fault."""
