"""Typed stack configuration (see stack.py and its concerns' modules for every key), pure: no
Pulumi here."""

from core.problems import ConfigError, ConfigProblem
from core.vocabulary import PROJECT
from settings.parse import parse_settings
from settings.stack import StackSettings

__all__ = ["PROJECT", "ConfigError", "ConfigProblem", "StackSettings", "parse_settings"]
