"""Regenerate specs/schema/inferenceendpointconfig-v<version>.json from the operator's CRD.

  python scripts/extract_crd_schema.py                      # both known versions, from the
                                                            # gzipped copies in tests/specs/crds/
  python scripts/extract_crd_schema.py --reference-dir DIR  # same, CRD files (or .gz) from DIR
  python scripts/extract_crd_schema.py --check              # exit 1 if a committed file differs
  python scripts/extract_crd_schema.py --crd FILE --operator-version 3.4 --source REPO/PATH@SHA

Users' machines need only the JSON files; this script is for updating them when a new operator
release changes the CRD.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a file from any directory, installed or not

from specs.schema.extract import (  # noqa: E402
    KNOWN_CRDS,
    SCHEMA_DIR,
    extract,
    render,
    schema_file,
)

# The CRDs as published upstream (specs/schema/extract.py, KNOWN_CRDS, names the source of each).
DEFAULT_REFERENCE_DIR = ROOT / "tests" / "specs" / "crds"


def _crd_file(directory: Path, name: str) -> Path:
    """`name` in `directory`, or its gzipped copy `name.gz` when only that is there."""
    plain, packed = directory / name, directory / f"{name}.gz"
    return packed if packed.is_file() and not plain.is_file() else plain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE_DIR)
    parser.add_argument("--crd", type=Path, help="one CRD file instead of the known ones")
    parser.add_argument("--operator-version", help="with --crd: e.g. 3.4")
    parser.add_argument("--source", help="with --crd: repo/path@commit the file came from")
    parser.add_argument("--out-dir", type=Path, default=SCHEMA_DIR)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)

    if args.crd:
        if not (args.operator_version and args.source):
            parser.error("--crd needs --operator-version and --source")
        jobs = [(args.operator_version, args.crd, args.source)]
    else:
        jobs = [(v, _crd_file(args.reference_dir, f), src) for v, (f, src) in KNOWN_CRDS.items()]

    stale = []
    for version, crd, source in jobs:
        if not crd.is_file():
            print(f"error: CRD file {crd} not found (--reference-dir / --crd)", file=sys.stderr)
            return 2
        text = render(extract(crd, version, source))
        out = args.out_dir / schema_file(version).name
        if args.check:
            if not out.is_file() or out.read_text() != text:
                stale.append(str(out))
        else:
            out.write_text(text)
            print(f"wrote {out} ({len(text):,} bytes) from {crd}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run {Path(__file__).name}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
