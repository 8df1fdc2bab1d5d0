"""The rule set as a whole (policies/rules/__init__.py): silent on the repo's stacks, every
rule registered once under its vocabulary name, and `evaluate`'s enforcement levels
(per-rule overrides, advisories made mandatory, a rule disabled)."""

from __future__ import annotations

import pytest

from core.vocabulary import RULE_NAMES
from policies.rules import ALL_RULES, evaluate
from tests.policies.conftest import gpu_group, iec_spec, recorded


@pytest.mark.parametrize("stack", ["dev", "prod", "canary"])
def test_repo_stacks_have_no_violations(stack):
    assert evaluate(recorded(stack)) == []


def test_every_rule_is_registered_once_with_a_kebab_name():
    names = [r.name for r in ALL_RULES]
    assert len(names) == len(set(names)) == 28  # every rule once
    assert all(n.startswith("hyperpod-dpd-") and n == n.lower() for n in names)


def test_rule_names_are_the_vocabulary_s():
    assert tuple(r.name for r in ALL_RULES) == RULE_NAMES


def test_enforcement_overrides_and_advisories_mandatory(dev):
    iec_spec(dev)["pdSpec"]["prefillSpec"]["replicas"] = 3
    gpu_group(dev, "prefill")["instanceCount"] = 3
    (advisory,) = evaluate(dev)
    assert (advisory.policy, advisory.enforcement) == ("hyperpod-dpd-routing-strategy", "advisory")
    assert evaluate(dev, advisories_mandatory=True)[0].enforcement == "mandatory"
    assert evaluate(dev, enforcement={"hyperpod-dpd-routing-strategy": "disabled"}) == []
