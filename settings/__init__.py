"""Typed stack configuration (see stack.py and its concerns' modules for every key), pure: no
Pulumi here."""

from core.vocabulary import PROJECT
from settings.errors import ConfigError, ConfigProblem
from settings.parse import parse_settings
from settings.stack import StackSettings

__all__ = ["PROJECT", "ConfigError", "ConfigProblem", "StackSettings", "parse_settings"]
