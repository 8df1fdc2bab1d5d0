"""The running program's configuration: read once from the Pulumi runtime, validated, frozen.

The only place the program touches `pulumi.Config`: everything downstream receives the typed
settings (settings/) and the secrets as Pulumi secret Outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi.runtime import config as runtime_config

from core.vocabulary import PROJECT
from settings import ConfigError, StackSettings
from settings.parse import decode_runtime_value, parse_settings


class StackConfigError(ConfigError, pulumi.RunError):
    """A ConfigError that `pulumi up` prints as a message, without a traceback."""


@dataclass(frozen=True)
class StackConfig:
    """What components receive: validated settings plus the secrets as Pulumi secret Outputs."""

    settings: StackSettings
    hf_token: pulumi.Output[str] | None
    project: str
    stack: str


def load_stack_config() -> StackConfig:
    """Read and validate all config of the running Pulumi program (real engine or mocks)."""
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    try:
        raw = {k: decode_runtime_value(k, runtime_config.get_config(k)) for k in sorted(keys)}
        secret = {k for k in keys if runtime_config.is_config_secret(k)}
        settings = parse_settings(raw, secret)
    except ConfigError as exc:
        raise StackConfigError(exc.problems, exc.source) from None
    has_token = raw.get(f"{PROJECT}:hfToken")
    hf_token = pulumi.Config(PROJECT).get_secret("hfToken") if has_token else None
    return StackConfig(settings, hf_token, pulumi.get_project(), pulumi.get_stack())
