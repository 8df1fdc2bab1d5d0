"""`hyperpod-dpd fetch --stack <stack>`: the digest each image the stack runs by tag names today,
recorded in `.hyperpod-dpd/image-digests.json` and printed as the command that pins it,
`pulumi config set --path 'KEY' 'REF@sha256:...'` (hyperpod-dpd-images-by-digest names the same
images; core/images.py pin_command says why a command and not a YAML line). An image already
pinned is left as the stack has it; a registry out of reach is one line for that image, never a
failed fetch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from core.images import ImageRef, parse_image, pin_command
from core.versions import VERIFY_CURL_IMAGE
from hyperpod_dpd.fetch.registry import RegistryError, resolve_digest
from hyperpod_dpd.shared.images import StackImage, stack_images
from infra.charts import VENDOR_DIR
from settings import StackSettings

DIGESTS_FILE = f"{VENDOR_DIR}/image-digests.json"
VERIFY_FLAG = "hyperpod-dpd verify --curl-image"


def images_to_resolve(settings: StackSettings) -> list[StackImage]:
    """The stack's images, and the curl pod `hyperpod-dpd verify` starts (set by its flag)."""
    return [*stack_images(settings), StackImage(VERIFY_FLAG, VERIFY_CURL_IMAGE)]


def _line(key: str, ref: ImageRef, stack: str) -> str:
    """The command that runs `ref`; single quotes for the shell (a reference holds none)."""
    if key == VERIFY_FLAG:
        return f"{key} '{ref}'"
    return pin_command(key, str(ref), stack)


def resolve_images(
    settings: StackSettings,
    project_dir: Path,
    stack: str,
    resolve: Callable[[ImageRef], str] = resolve_digest,
) -> tuple[list[str], int]:
    """Resolve and record the stack's tag-only images; the lines to print and how many failed."""
    lines, failed, found = [], 0, {}
    for item in images_to_resolve(settings):
        ref = parse_image(item.image)  # the settings took it: it parses
        if ref.pinned:
            lines.append(f"  pinned already: {item.key}: {ref}")
            continue
        try:
            digest = found.get(ref.tagged) or resolve(ref)
        except RegistryError as exc:
            failed += 1
            lines.append(f"  not resolved: {item.image} ({item.key}): {exc}")
            continue
        found[ref.tagged] = digest
        lines.append(f"  {_line(item.key, ref.with_digest(digest), stack)}")
    if found and (warning := _record(project_dir / DIGESTS_FILE, found)):
        lines.append(warning)
    return lines, failed


def _record(path: Path, found: dict[str, str]) -> str | None:
    """Merge `found` (repo:tag -> digest, as resolved now) into the record; a record that is not
    a JSON object (edited by hand, cut short) is replaced, as a cache is: the warning says so."""
    recorded, warning = _recorded(path)
    recorded.update(found)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")
    partial.replace(path)
    return warning


def _recorded(path: Path) -> tuple[dict[str, str], str | None]:
    if not path.exists():
        return {}, None
    try:
        recorded = json.loads(path.read_bytes())
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        why = f"not JSON: {exc}"
    else:
        if isinstance(recorded, dict):
            return recorded, None
        why = f"a JSON {type(recorded).__name__}, not an object of repo:tag -> digest"
    return {}, (
        f"warning: {DIGESTS_FILE} was unreadable ({why}); fetch wrote a new record with the "
        "digests resolved now (the ones it held before are dropped: run fetch for each stack "
        "again to record theirs)"
    )
