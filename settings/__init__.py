"""Typed stack configuration (see model.py for every key), pure: no Pulumi here."""

from core.vocabulary import PROJECT
from settings.errors import ConfigError, ConfigProblem
from settings.model import StackSettings
from settings.parse import parse_settings

__all__ = ["PROJECT", "ConfigError", "ConfigProblem", "StackSettings", "parse_settings"]
