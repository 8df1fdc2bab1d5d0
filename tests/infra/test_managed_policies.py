"""Every AWS-managed policy the stack attaches is listed in docs/policies.md with its source and
why, and the list is exactly what the plans attach: a new attachment without a line fails here,
and so does a line for an attachment that is gone."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT, run_stack, stack_raw

DOC = ROOT / "docs" / "policies.md"
SECTION = "## AWS-managed policies the stack attaches"
STACKS = ("dev", "prod", "canary")
# AWS's own policies: IAM managed policies and EKS access policies (no account in the ARN).
MANAGED = re.compile(r"^arn:aws[a-z-]*:(?:iam::aws:policy|eks::aws:cluster-access-policy)/(.+)$")


def documented() -> dict[str, str]:
    """The table's rows: attachment name pattern (a regular expression) -> policy name."""
    text = DOC.read_text()
    assert SECTION in text, f"{DOC.name} has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not cells[0].startswith("`"):
            continue
        policy, attachment = cells[0].split("`")[1], cells[1].strip("`")
        pattern = re.escape(attachment).replace(re.escape("<key>"), "[a-z0-9-]+")
        assert pattern not in rows, f"{attachment} is listed twice"
        assert all(cells[2:5]), f"{attachment}: attached to, source and why are all needed"
        rows[pattern] = policy
    return rows


def attached() -> set[tuple[str, str]]:
    """(attachment resource name, AWS-managed policy name) of every plan."""
    found = set()
    for stack in STACKS:
        for r in run_stack(stack_raw(stack), stack=stack).resources:
            match = MANAGED.match(str(r.inputs.get("policyArn", "")))
            if match:
                found.add((r.name, match.group(1)))
    return found


@pytest.mark.long
def test_the_documented_managed_policies_are_what_the_plans_attach():
    rows = documented()
    plans = attached()
    unlisted = sorted(
        f"{name} ({policy})"
        for name, policy in plans
        if not any(re.fullmatch(p, name) and rows[p] == policy for p in rows)
    )
    assert not unlisted, f"attached, without a line in {DOC.name}: {unlisted}"
    gone = sorted(p for p in rows if not any(re.fullmatch(p, name) for name, _ in plans))
    assert not gone, f"lines in {DOC.name} no plan attaches: {gone}"
