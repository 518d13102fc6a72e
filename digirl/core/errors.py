"""Exceptions with messages a user can act on."""

from __future__ import annotations


class DigirlError(Exception):
    """Base class for errors raised deliberately by digirl."""


class ConfigError(DigirlError):
    """A configuration is invalid (unknown key, wrong type, incompatible options)."""


class DataError(DigirlError):
    """A dataset or checkpoint file is missing, corrupt or incompatible. The message names the file."""


class UnsupportedInstructionError(DigirlError):
    """An instruction that no task family of the environment understands."""


class EnvFailure(DigirlError):
    """The environment itself failed (crash, hang, lost device); the episode is not the agent's fault."""
