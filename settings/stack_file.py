"""Reading Pulumi.yaml and Pulumi.<stack>.yaml the way the Pulumi CLI does, without the CLI.

`load_stack` gives the config map the CLI would hand the program: full keys -> text (objects as
JSON), project defaults from Pulumi.yaml under the stack's own values. Values stored as
`secure:` cannot be decrypted offline; they become secrets whose value is "[secret]".
`read_stack` is how every command reads a stack: that map, decoded and validated once by the
program's own `parse_settings`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from core.problems import ConfigError, ConfigProblem
from core.vocabulary import PROJECT
from settings.config.errors import for_stack
from settings.parse import parse_settings
from settings.stack import StackSettings
from settings.stack_name import check_stack_name
from settings.yaml_files import SafeLoader

SECRET_PLACEHOLDER = "[secret]"


@dataclass(frozen=True)
class StackFile:
    project: str
    stack: str
    path: Path
    config: dict[str, str]  # what the program receives
    secret_keys: list[str]

    @property
    def has_hf_token(self) -> bool:
        """Whether the stack sets the Hugging Face token (a secret: its value is not read)."""
        return bool(self.config.get(f"{self.project}:hfToken"))


@dataclass(frozen=True)
class Stack:
    """A stack as a command reads it, once: the file's config and its validated settings."""

    file: StackFile
    settings: StackSettings

    @property
    def name(self) -> str:
        return self.file.stack


def read_stack(project_dir: Path, stack: str) -> Stack:
    """Pulumi.<stack>.yaml read, decoded and validated: ConfigError (exit 2) naming every bad
    key at once."""
    file = load_stack(project_dir, stack)
    named = check_stack_name(file.project, stack)
    try:
        settings = parse_settings(file.config, file.secret_keys)
    except ConfigError as exc:  # every problem at once, the stack's name among them
        raise ConfigError(for_stack([*named, *exc.problems], stack), exc.source) from None
    if named:
        raise ConfigError(named, source="stack selection")
    return Stack(file, settings)


def with_value(read: Stack, key: str, value: Any) -> Stack:
    """The stack `read` as it would be read with `key` (a full key) set to `value`, as after a
    `pulumi config set` of it: validated as read_stack validates; the file is not written."""
    config = {**read.file.config, key: as_config_text(value)}
    file = replace(read.file, config=config)
    try:
        settings = parse_settings(config, file.secret_keys)
    except ConfigError as exc:
        raise ConfigError(for_stack(exc.problems, file.stack), exc.source) from None
    return Stack(file, settings)


def available_stacks(project_dir: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in project_dir.glob("Pulumi.*.yaml"))


class _UniqueKeyLoader(SafeLoader):
    """A SafeLoader (libyaml's when available) that refuses a key given twice in one mapping,
    as the Pulumi CLI's YAML parser does (PyYAML would silently keep the last value)."""


def _unique_mapping(loader: SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise DuplicateKeyError(key, seen[key], key_node.start_mark.line + 1)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=True)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


class DuplicateKeyError(yaml.YAMLError):
    def __init__(self, key: Any, first: int, again: int):
        self.key, self.first, self.again = key, first, again
        super().__init__(f"key {key!r} at line {again} was already given at line {first}")


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(path.read_text(), Loader=_UniqueKeyLoader) or {}
    except DuplicateKeyError as exc:
        problem = ConfigProblem(
            str(exc.key),
            f"given twice (lines {exc.first} and {exc.again})",
            "each key once per mapping (the Pulumi CLI refuses duplicate keys)",
            f"keep one of the two in {path.name}",
        )
        raise ConfigError([problem], source=path.name) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = ConfigProblem(
            str(path.name), f"invalid YAML{where}", "a YAML mapping", "fix the YAML syntax"
        )
        raise ConfigError([problem], source=path.name) from None
    if not isinstance(data, dict):
        raise ConfigError(
            [ConfigProblem(path.name, data, "a YAML mapping", "start the file with 'config:'")],
            source=path.name,
        )
    return data


def _full_key(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _hide_secure(value: Any) -> tuple[Any, bool]:
    """Replace every `{secure: ...}` leaf with the placeholder; report whether one was found."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        found = False
        out = {}
        for k, v in value.items():
            out[k], hit = _hide_secure(v)
            found = found or hit
        return out, found
    if isinstance(value, list):
        items = [_hide_secure(v) for v in value]
        return [v for v, _ in items], any(hit for _, hit in items)
    return value, False


def as_config_text(value: Any) -> str:
    """The text form Pulumi passes to programs: strings as-is, everything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def load_stack(project_dir: Path, stack: str) -> StackFile:
    project_file = project_dir / "Pulumi.yaml"
    project_doc = _read_yaml(project_file)
    project = str(project_doc.get("name", PROJECT))
    stack_path = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_path.exists():
        known = ", ".join(available_stacks(project_dir)) or "none"
        problem = ConfigProblem(
            "--stack",
            stack,
            f"a stack with a Pulumi.<stack>.yaml file here (found: {known})",
            f"create Pulumi.{stack}.yaml (copy Pulumi.dev.yaml) or pick one of: {known}",
        )
        raise ConfigError([problem], source="stack selection")

    values: dict[str, Any] = {}
    for key, decl in (project_doc.get("config") or {}).items():
        full = _full_key(project, key)
        if isinstance(decl, dict) and ("default" in decl or "value" in decl):
            values[full] = decl.get("value", decl.get("default"))
        elif not isinstance(decl, dict):
            values[full] = decl  # shorthand `key: value`

    secret_keys: set[str] = set()
    stack_config = _read_yaml(stack_path).get("config") or {}
    if not isinstance(stack_config, dict):
        problem = ConfigProblem(
            "config",
            stack_config,
            "a mapping of keys to values (`aws:region: us-east-2`, ...)",
            f"write {stack_path.name}'s config as `key: value` lines, not a list",
        )
        raise ConfigError([problem], source=stack_path.name)
    for key, value in stack_config.items():
        full = _full_key(project, key)
        values[full], secret = _hide_secure(value)
        if secret:
            secret_keys.add(full)
    config = {k: as_config_text(v) for k, v in values.items() if v is not None}
    return StackFile(project, stack, stack_path, config, sorted(secret_keys))
