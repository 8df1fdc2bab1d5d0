"""The stack's Prometheus rule file: per endpoint with an SLO (settings/endpoint/slo.py), its recording
rules (specs/slo/records.py) and alerts (specs/slo/alerts.py) in one rule group, deployed into
the stack's Amazon Managed Prometheus workspace, which takes Prometheus' rule-file format ("Rules
files in Amazon Managed Service for Prometheus",
docs.aws.amazon.com/prometheus/latest/userguide/AMP-rules-upload.html). `promtool check rules`
accepts it and `promtool test rules` exercises every alert (tests/specs/slo/test_rules.py).
"""

from __future__ import annotations

from typing import Any

import yaml

from settings.stack import StackSettings
from specs.slo.alerts import alerts
from specs.slo.records import EVALUATION_INTERVAL, error_ratio_records, judged, pool_records


def rule_file(s: StackSettings, stack: str) -> dict[str, Any] | None:
    """The rule file of `stack` (None: no endpoint has an objective)."""
    listed = judged(s, stack)
    if not listed:
        return None
    groups = []
    for j in listed:
        rules = [r for pool in j.entry.pools() for r in pool_records(j, pool)]
        rules += error_ratio_records(j)
        rules += alerts(j, listed, s.traffic)
        groups.append(
            {"name": f"hyperpod-dpd-{j.label}", "interval": EVALUATION_INTERVAL, "rules": rules}
        )
    return {"groups": groups}


def rule_file_text(s: StackSettings, stack: str) -> str | None:
    data = rule_file(s, stack)
    return None if data is None else yaml.dump(data, Dumper=_Plain, sort_keys=False, width=1000)


class _Plain(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Every value written out (no &anchors: the file reads as its rules, one by one). libyaml's
    emitter where PyYAML has it, as the plan's manifests (hyperpod_dpd/plan/planner.py): the
    same text, 8x faster than PyYAML's own, which took half of each judgement of a stack."""

    def ignore_aliases(self, data: Any) -> bool:
        return True
