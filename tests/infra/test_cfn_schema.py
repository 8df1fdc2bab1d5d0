"""Every AWS input the program registers, held to AWS's own rules (tests/cfn/): the CloudFormation
registry schemas cfn-lint ships, reached through one mapping of Pulumi types to CloudFormation
types, and the rules no schema has (core/aws/aws_rules.py).

Every stack any test builds is held to them (tests/conftest.py, aws_accepts). Here: the shipped
stacks and the variants that register every AWS type the program can, at `pulumi up` and at a
first preview; that no type goes unmapped; and that the check finds each kind of input AWS
refuses.
"""

from __future__ import annotations

import copy
import json

import pytest

from core.aws.aws_rules import ALB_FORWARD_TARGET_GROUPS_MAX
from hyperpod_dpd.plan.engine import RecordedResource
from settings.endpoint.traffic import TRAFFIC_KEY_MAX
from tests.cfn.check import NOT_KNOWN, NOT_KNOWN_LIST, aws_types, check_run, translate
from tests.cfn.mapping import EXEMPT, MAPPED
from tests.conftest import canary_raw, edit, run_stack, split_of, stack_raw

NS = "hyperpod-dpd"
SHIPPED = ("dev", "prod", "canary")


def _region(raw) -> str:
    return raw["aws:region"]


def _variants() -> dict[str, tuple[str, dict]]:
    """Stacks that register what the shipped ones do not (a placement group, alert
    subscriptions), or differently (a
    stack without observability, checkpoints staged by hand), and the split at the ends of what
    the settings take: 5 endpoints, weights 100 and 0, the longest key (its target group's
    auto-name of 32 characters)."""
    placement = edit(stack_raw("dev"), f"{NS}:network.placementGroup", True)
    bare = edit(stack_raw("prod"), f"{NS}:observability.enabled", False)
    manual = edit(stack_raw("dev"), f"{NS}:checkpoint.staging", "manual")
    edit(manual, f"{NS}:checkpoint.source", "s3://my-models/llama-3.3-70b")
    all_in = edit(canary_raw(), f"{NS}:traffic", {"baseline": 0, "candidate": 100})
    longest = canary_raw()
    key = "c" * TRAFFIC_KEY_MAX
    longest[f"{NS}:endpoints"][key] = longest[f"{NS}:endpoints"].pop("candidate")
    longest[f"{NS}:traffic"] = {"baseline": 95, key: 5}
    alerted = edit(canary_raw(), f"{NS}:observability.alertSubscriptions",
                   ["oncall@example.com", "https://hooks.example.com/alerts"])  # fmt: skip
    return {
        "placement group": ("dev", placement),
        "no observability": ("prod", bare),
        "manual staging": ("dev", manual),
        "five endpoints": ("canary", split_of(ALB_FORWARD_TARGET_GROUPS_MAX)),
        "weights 0 and 100": ("canary", all_in),
        "the longest traffic key": ("canary", longest),
        "alert subscriptions": ("canary", alerted),
    }


VARIANTS = _variants()


@pytest.mark.parametrize("preview", [False, True], ids=["up", "first preview"])
@pytest.mark.parametrize("stack", SHIPPED)
def test_the_shipped_stacks_pass_aws_rules(stack, preview):
    raw = stack_raw(stack)
    run = run_stack(raw, stack=stack, preview=preview)
    assert check_run(run, _region(raw), preview=preview) == []


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_the_variants_pass_aws_rules(name):
    stack, raw = VARIANTS[name]
    assert check_run(run_stack(raw, stack=stack), _region(raw)) == []


def test_values_not_known_at_preview_are_skipped_not_failed():
    raw = stack_raw("canary")
    run = run_stack(raw, stack="canary", preview=True)
    region = _region(raw)
    documents = [d for r in run.resources if r.type in MAPPED for d in translate(r, region)]
    stand_ins = (json.dumps(NOT_KNOWN), json.dumps(NOT_KNOWN_LIST))
    unknown = [d.source.name for d in documents if any(x in json.dumps(d.props) for x in stand_ins)]
    # The security group rules' group ids, the subnets and the cluster's name are outputs.
    assert {"traffic-ingress-nodes", "traffic-alb", "hyperpod-cluster"} <= set(unknown)
    assert check_run(run, region, preview=True) == []


def test_every_aws_type_the_program_registers_is_mapped_and_every_mapping_is_used():
    registered = set()
    for stack in SHIPPED:
        registered |= aws_types(run_stack(stack_raw(stack), stack=stack))
    for stack, raw in VARIANTS.values():
        registered |= aws_types(run_stack(raw, stack=stack))
    assert registered - set(MAPPED) - set(EXEMPT) == set()  # nothing slips past unjudged
    assert set(MAPPED) | set(EXEMPT) == registered  # no mapping the tests never exercise
    assert all(exempt.reason for exempt in EXEMPT.values())


def test_a_type_without_a_mapping_fails_the_check():
    run = run_stack(stack_raw("dev"))
    run.resources.append(
        RecordedResource("aws:sqs/queue:Queue", "jobs", "urn:x", None, None, [], False, False,
                         True, {"name": "jobs"})
    )  # fmt: skip
    (finding,) = check_run(run, "us-east-2")
    assert (finding.resource, finding.rule) == ("jobs", "unmapped")


# --- What the check finds: one bad input of each kind, set on a recorded run -------------------


def _set(inputs: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    node = inputs
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value


def _six_target_groups(inputs: dict) -> None:
    groups = inputs["actions"][0]["forward"]["targetGroups"]
    while len(groups) <= ALB_FORWARD_TARGET_GROUPS_MAX:
        groups.append({**copy.deepcopy(groups[0]), "arn": f"{groups[0]['arn']}{len(groups)}"})


SAID = "The endpoints' internal load balancer: HTTP from the VPC only"
BREAKS = {
    # The canary's first `pulumi up` failed on these two: apostrophes.
    "a group description with an apostrophe": (
        "traffic-sg", lambda i: _set(i, "description", SAID), "E3031"),
    "a rule description with an apostrophe": (
        "traffic-egress-routers", lambda i: _set(i, "description", "the routers' pods"),
        "API_IpRange.html"),
    "a rule description longer than 255": (
        "nodes-eks-ingress", lambda i: _set(i, "description", "x" * 256), "API_IpRange.html"),
    "six target groups in one forward action": (
        "traffic-forward", _six_target_groups, "load-balancer-limits.html"),
    "a weight above 999": (
        "traffic-forward",
        lambda i: _set(i, "actions.0.forward.targetGroups.0.weight", 1000),
        "API_TargetGroupTuple.html"),
    "four values in one header condition": (
        "traffic-forward",
        lambda i: _set(i, "conditions.0.httpHeader.values", ["Bearer a", "Bearer b", "Bearer c",
                                                             "Bearer d"]),
        "rule-condition-types.html"),
    "a header value of 129 characters": (
        "traffic-forward",
        lambda i: _set(i, "conditions.0.httpHeader.values", ["Bearer " + "k" * 122]),
        "rule-condition-types.html"),
    "a listener's fixed response with a status of 600": (
        "traffic-listener",
        lambda i: _set(i, "defaultActions.0.fixedResponse.statusCode", "600"), "E3031"),
    "a target group name of 33 characters": (
        "traffic-baseline", lambda i: _set(i, "name", "t" * 33), "API_CreateTargetGroup.html"),
    "a load balancer named internal-": (
        "traffic-alb", lambda i: _set(i, "name", "internal-alb"), "API_CreateLoadBalancer.html"),
    "an IAM policy element IAM does not know": (
        "inference-operator-alb-controller",
        lambda i: _set(i, "policy", json.dumps({"Version": "2012-10-17", "Statement": [],
                                                "Comment": "x"})),
        "E3510"),
    "a role name of 65 characters": ("eks-cluster-role", lambda i: _set(i, "name", "r" * 65),
                                     "E3033"),
    "a HyperPod node recovery mode that does not exist": (
        "hyperpod-cluster", lambda i: _set(i, "nodeRecovery", "Sometimes"), "E3030"),
    "an EKS log type that does not exist": (
        "eks-cluster", lambda i: _set(i, "enabledClusterLogTypes", ["api", "everything"]),
        "E3030"),
    "an input CloudFormation has no property for": (
        "network-vpc", lambda i: _set(i, "enableDnsEverywhere", True), "E3002"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_the_check_finds_what_aws_refuses(case):
    # The settings stop bad values before the program runs: break a recorded input instead.
    name, breaks, rule = BREAKS[case]
    run = run_stack(canary_raw(), stack="canary")
    breaks(run.named(name).inputs)
    findings = check_run(run, "us-east-2")
    assert findings, case
    assert all(f.resource == name for f in findings), [str(f) for f in findings]
    assert any(rule in f.rule or rule in f.message for f in findings), [str(f) for f in findings]


def test_training_plan_arn_fits_the_schema():
    arn = "arn:aws:sagemaker:us-east-2:111122223333:training-plan/p5-dev"
    raw = edit(stack_raw("dev"), f"{NS}:instanceGroups.prefill.trainingPlanArn", arn)
    run = run_stack(raw)
    (cluster,) = run.of_type("aws-native:sagemaker:Cluster")
    assert arn in json.dumps(cluster.inputs)
    assert check_run(run, "us-east-2") == []
