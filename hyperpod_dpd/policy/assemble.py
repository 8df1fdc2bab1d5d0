"""Assembling the CrossGuard pack directory: everything it imports, in one place, publishable.

The pack runs from its own directory with its own venv (the CLI starts
`<pack>/venv/bin/python -u -m pulumi.policy <engine> <pack>` there, with no PYTHONPATH), and
`pulumi policy publish` uploads that directory alone. Its rules import only `core`, the
project's pure bottom layer (the import contract keeps it so), so the pack is: the entry point,
PulumiPolicy.yaml, requirements.txt, the `policies` package (without the program's gate) and
`core`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from hyperpod_dpd.shared.output_dirs import claim, clear
from hyperpod_dpd.shared.venvs import venv_from

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "policies" / "__main__.py"
FILES = ("PulumiPolicy.yaml", "requirements.txt")
# Modules of the source packages that the pack leaves out: the program's gate (it imports the
# desired state and Pulumi's runtime) and the entry point, which becomes the pack's __main__.py.
LEFT_OUT = {"policies/gate.py", "policies/__main__.py"}
PACKAGES = ("policies", "core")
VENV = "venv"
# All a pack directory holds (Python may cache bytecode beside the entry point when it runs).
OUTPUTS = ("__main__.py", *FILES, *PACKAGES, VENV, "__pycache__")


def assemble(out: Path) -> Path:
    """Write the pack to `out` (its `venv/`, if there, is kept: building it is slow).
    ConfigError naming --out when `out` holds anything a pack does not (nothing is removed)."""
    claim(out, OUTPUTS, "`hyperpod-dpd policy-pack`")
    clear(out, OUTPUTS, keep=(VENV,))
    shutil.copyfile(ENTRY, out / "__main__.py")
    for name in FILES:
        shutil.copyfile(ROOT / "policies" / name, out / name)
    for package in PACKAGES:
        for source in sorted((ROOT / package).rglob("*.py")):
            relative = source.relative_to(ROOT).as_posix()
            if relative in LEFT_OUT:
                continue
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return out


def build_venv(out: Path, python: str = sys.executable) -> Path:
    """Create `out/venv` from `out/requirements.txt`, unless it already holds exactly that."""
    return venv_from(out / "requirements.txt", out / VENV, python)
