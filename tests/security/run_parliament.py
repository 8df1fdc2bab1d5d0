"""Run by build/scan-venv's Python (parliament lives there, tests/security/scanners.py says
why): reads {"name": ..., "kind": "identity"|"resource", "policy": text} lines on stdin, prints
one JSON finding per line: name, issue, severity, detail (and the line's "label", if it has
one: several plans' documents judged in one run). Imports nothing of the project."""

from __future__ import annotations

import json
import sys
import warnings

warnings.simplefilter("ignore")  # pkg_resources' deprecation, at parliament's import

from parliament import analyze_policy_string  # noqa: E402 (after the filter)


def main() -> int:
    for line in sys.stdin:
        doc = json.loads(line)
        # parliament 1.6.4 judges every document as an identity policy (it has no resource
        # policy mode): what that means for trust, bucket and key policies is in reviewed.yaml.
        policy = analyze_policy_string(doc["policy"], include_community_auditors=True)
        for f in policy.findings:
            print(json.dumps({"name": doc["name"], "issue": f.issue, "severity": f.severity,
                              "detail": str(f.detail)[:300], "label": doc.get("label")}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
