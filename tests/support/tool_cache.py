"""Real tools' answers kept by what decides them, for the suite: promtool replaying the alert
scenarios (tests/specs/slo/test_rules.py), cfn-lint over every Region
(tests/security/test_ci_credentials.py) and on each AWS resource a stack registers
(tests/cfn/check.py), checkov and parliament over the plans (tests/security/scanners.py), each
costing seconds of CPU on inputs that rarely change between two runs of the suite.

An answer is stored under build/test-cache/<tool>/ by the SHA-256 of everything that decides it
(`key`): the tool itself (its version, or the versions of the environment it runs in) and every
input it reads (the files' contents, its arguments). A key nobody has answered yet runs the real
tool; the same key again reads its answer back. Only the answers `keep` accepts are stored: a
failing verdict (promtool's FAILED, cfn-lint's findings on the roles template) is never kept,
so a test that fails runs the tool again and shows what it says now; findings that are data to
the tests (the scanners' against the reviewed list, cfn-lint's on each resource, which tests
also break on purpose) are the answer whatever they are. The parallel workers may both answer a new key: each writes the same answer whole (written
aside, then renamed into place). `rm -r build/test-cache` forgets every answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.support.program_runs import write_whole

CACHE = ROOT / "build" / "test-cache"


def key(*parts: str | bytes) -> str:
    """The SHA-256 of `parts`, each length-prefixed (no two sequences of parts give one text)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def kept_each(
    tool: str,
    keys: Mapping[str, str],
    answer: Callable[[list[str]], Mapping[str, Any]],
    keep: Callable[[Any], bool],
    cache: Path = CACHE,
) -> dict[str, Any]:
    """Each case's answer (JSON data), by case: read back for the cases whose key (`keys`) was
    answered before, the others from one call of `answer` with the cases not known (the real
    tool, run once for all of them); of those, the answers `keep` accepts are stored."""
    directory = cache / tool
    known = {}
    for case, k in keys.items():
        path = directory / f"{k}.json"
        if path.exists():
            known[case] = json.loads(path.read_text())
    missing = [case for case in keys if case not in known]
    if missing:
        fresh = answer(missing)
        directory.mkdir(parents=True, exist_ok=True)
        for case in missing:
            known[case] = fresh[case]
            if keep(fresh[case]):
                _write(directory / f"{keys[case]}.json", fresh[case])
    return known


def kept(
    tool: str, k: str, answer: Callable[[], Any], keep: Callable[[Any], bool], cache: Path = CACHE
) -> Any:
    """One answer: kept_each for a single case."""
    return kept_each(tool, {tool: k}, lambda _: {tool: answer()}, keep, cache)[tool]


def _write(path: Path, answer: Any) -> None:
    write_whole(path, json.dumps(answer).encode())
