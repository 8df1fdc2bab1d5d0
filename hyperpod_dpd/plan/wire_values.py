"""What the plan's files hold of the values a program registers: the engine's wire values
(protobuf Structs, with the SDK's signature keys for secrets, resource references and assets)
made plain JSON, secrets hidden and unknowns marked."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pulumi.runtime import rpc

SECRET = "[secret]"
UNKNOWN = "[unknown]"
SIG_KEY = rpc._special_sig_key
SECRET_SIG = rpc._special_secret_sig
_RESOURCE_SIG = rpc._special_resource_sig
_ASSET_SIGS = {rpc._special_asset_sig, rpc._special_archive_sig}
_UNKNOWN_VALUE = rpc.UNKNOWN


def sanitize(value: Any, root: Path | None = None) -> Any:
    """Wire values -> plain JSON: secrets hidden, resource references as URNs, file assets by
    their path relative to the program and their content hash (Pulumi diffs assets by content,
    so a checkout in another directory is no change)."""
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return SECRET
        if sig == _RESOURCE_SIG:
            return value.get("urn")
        if sig in _ASSET_SIGS:
            return _asset(value, root)
        return {k: sanitize(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitize(v, root) for v in value]
    if value == _UNKNOWN_VALUE:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)  # protobuf Structs carry every number as a double
    return value


def _asset(value: dict[str, Any], root: Path | None) -> dict[str, Any]:
    out = {k: v for k, v in value.items() if k != SIG_KEY}
    path = out.get("path")
    if isinstance(path, str) and Path(path).is_file():
        file = Path(path).resolve()
        out["sha256"] = hashlib.sha256(file.read_bytes()).hexdigest()
        if root is not None and file.is_relative_to(root):
            out["path"] = file.relative_to(root).as_posix()
    return out
