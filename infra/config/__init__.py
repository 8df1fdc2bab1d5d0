"""Typed stack configuration (see model.py for every key)."""

from infra.config.errors import ConfigError, ConfigProblem
from infra.config.load import StackConfig, load_stack_config, parse_settings
from infra.config.model import PROJECT, StackSettings

__all__ = [
    "PROJECT",
    "ConfigError",
    "ConfigProblem",
    "StackConfig",
    "StackSettings",
    "load_stack_config",
    "parse_settings",
]
