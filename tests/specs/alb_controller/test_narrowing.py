"""The narrowing keeps every call the controller makes and refuses what the original let any
holder of the role do: judged with IAM's evaluation of Allow statements (tests/security/iam.py)
on requests built from what the controller sends (the calls and their sources are in
specs/alb_controller/narrowing.py's docstring; kubernetes-sigs/aws-load-balancer-controller
v2.13.0)."""

from __future__ import annotations

import json
import re

import pytest

from specs.alb_controller.narrowing import (
    CHANGES,
    CLUSTER_TAG,
    MOVED,
    Scope,
    UpstreamPolicyMoved,
    moved,
    narrowed,
)
from specs.alb_controller.upstream import upstream_policy
from tests.security.iam import Request, access_level, allows, listed

REGION, ACCOUNT = "us-east-2", "123456789012"
VPC = f"arn:aws:ec2:{REGION}:{ACCOUNT}:vpc/vpc-0aaaaaaaaaaaaaaaa"
OTHER_VPC = f"arn:aws:ec2:{REGION}:{ACCOUNT}:vpc/vpc-0bbbbbbbbbbbbbbbb"
OWNER = (("hyperpod-dpd:project", "hyperpod-dpd"), ("hyperpod-dpd:stack", "dev"))
SCOPE = Scope("aws", VPC, OWNER)
CLUSTER = "hyperpod-dpd-dev"
SENT = {f"aws:RequestTag/{CLUSTER_TAG}": CLUSTER}  # the tag in the request
CARRIES = {f"aws:ResourceTag/{CLUSTER_TAG}": CLUSTER}  # the tag on the resource
# What the stack's own carry (specs/desired.py base_tags).
STACK_TAGS = {f"aws:ResourceTag/{k}": v for k, v in OWNER}
PROD_TAGS = {**STACK_TAGS, "aws:ResourceTag/hyperpod-dpd:stack": "prod"}  # another stack's


def _sg(group: str) -> str:
    return f"arn:aws:ec2:{REGION}:{ACCOUNT}:security-group/{group}"


def _elb(resource: str) -> str:
    return f"arn:aws:elasticloadbalancing:{REGION}:{ACCOUNT}:{resource}"


# The controller's load balancer (its name and ids as ELB writes them), and the stack's own (the
# traffic split, specs/traffic/__init__.py: registered by Pulumi, tagged with the stack's tags).
OWN = "app/k8s-endpoint-ingress-1a2b3c4d5e/50dc6c495c0c9188"
STACK = "app/traffic-alb-7f3a9c1/6d0ecf831eec9f09"
LB, LISTENER, RULE = (
    _elb(f"loadbalancer/{OWN}"),
    _elb(f"listener/{OWN}/f2f7dc8efc522ab2"),
    _elb(f"listener-rule/{OWN}/f2f7dc8efc522ab2/9683b2d02a6cabee"),
)
STACK_LB, STACK_LISTENER = _elb(f"loadbalancer/{STACK}"), _elb(f"listener/{STACK}/0467ef3c8400ae65")
ELB = "elasticloadbalancing:"


def _creates(action: str) -> dict[str, str]:
    return {**SENT, f"{ELB}CreateAction": action}


# What the controller asks IAM for, each with where it does so (pkg/... of the controller).
CONTROLLER_CALLS = {
    "the load balancer's group and the backend group, created tagged in the stack's VPC "
    "(deploy/ec2/security_group_manager.go, networking/backend_sg_provider.go)": [
        Request("ec2:CreateSecurityGroup", _sg("sg-0new"), {**SENT, "ec2:Vpc": VPC}),
        Request("ec2:CreateSecurityGroup", VPC, SENT),
        Request("ec2:CreateTags", _sg("sg-0new"), {**SENT, "ec2:CreateAction": "CreateSecurityGroup"}),
    ],
    "rules on its own groups (networking/security_group_manager.go)": [
        Request(f"ec2:{a}SecurityGroupIngress", _sg("sg-0own"), {**CARRIES, "ec2:Vpc": VPC})
        for a in ("Authorize", "Revoke")
    ] + [Request("ec2:DeleteSecurityGroup", _sg("sg-0own"), {**CARRIES, "ec2:Vpc": VPC})],
    "rules on the nodes' group, which it never tagged "
    "(targetgroupbinding/networking_manager.go resolveEndpointSGForENI)": [
        Request(f"ec2:{a}SecurityGroupIngress", _sg("sg-0nodes"), {**STACK_TAGS, "ec2:Vpc": VPC})
        for a in ("Authorize", "Revoke")
    ],
    "its load balancer, tagged at creation (deploy/elbv2/load_balancer_manager.go)": [
        Request(f"{ELB}CreateLoadBalancer", LB, SENT),
        Request(f"{ELB}AddTags", LB, _creates("CreateLoadBalancer")),
        Request(f"{ELB}ModifyLoadBalancerAttributes", LB, CARRIES),
    ],
    "listeners on its load balancer, tagged at creation (deploy/elbv2/listener_manager.go)": [
        Request(f"{ELB}CreateListener", LB, {**CARRIES, **SENT}),
        Request(f"{ELB}AddTags", LISTENER, _creates("CreateListener")),
    ],
    "its listeners' settings, certificates and tags (listener_manager.go Update, Delete; "
    "tagging_manager.go ReconcileTags)": [
        Request(f"{ELB}{a}", LISTENER, CARRIES)
        for a in ("ModifyListener", "AddListenerCertificates", "RemoveListenerCertificates",
                  "DeleteListener", "RemoveTags")
    ] + [Request(f"{ELB}AddTags", LISTENER, {**CARRIES, "aws:RequestTag/ingress.k8s.aws/stack": "x"})],
    "rules on its listeners, tagged at creation (deploy/elbv2/listener_rule_manager.go)": [
        Request(f"{ELB}CreateRule", LISTENER, {**CARRIES, **SENT}),
        Request(f"{ELB}AddTags", RULE, _creates("CreateRule")),
    ] + [
        Request(f"{ELB}{a}", RULE, CARRIES)
        for a in ("ModifyRule", "SetRulePriorities", "DeleteRule", "RemoveTags")
    ],
    "targets in the target groups of its Ingresses and Services, created tagged "
    "(deploy/elbv2/target_group_manager.go; targetgroupbinding/targets_manager.go)": [
        Request(f"{ELB}{a}Targets", _elb("targetgroup/k8s-endpoint-abc123/73e2d6bc24d8a067"), CARRIES)
        for a in ("Register", "Deregister")
    ],
    "targets in the stack's own target groups: the traffic split's TargetGroupBindings "
    "(specs/traffic/__init__.py; controllers/elbv2 targetgroupbinding)": [
        Request(f"{ELB}RegisterTargets", _elb("targetgroup/traffic-baseline-3c1e/4f5e"), STACK_TAGS),
        Request(f"{ELB}DeregisterTargets", _elb("targetgroup/traffic-baseline-3c1e/4f5e"), STACK_TAGS),
    ],
    "a web ACL an Ingress names (wafv2:AssociateWebACL's dependent action)": [
        Request(f"{ELB}SetWebAcl", "*"),
    ],
}  # fmt: skip

# What the original lets any holder of the role do, and the narrowed policy refuses.
REFUSED = {
    "open a group of another VPC": Request(
        "ec2:AuthorizeSecurityGroupIngress", _sg("sg-0elsewhere"), {"ec2:Vpc": OTHER_VPC}
    ),
    "create a group in another VPC": Request("ec2:CreateSecurityGroup", OTHER_VPC, SENT),
    "create an untagged group": Request("ec2:CreateSecurityGroup", _sg("sg-0x"), {"ec2:Vpc": VPC}),
    "add a listener to the stack's load balancer": Request(
        f"{ELB}CreateListener", STACK_LB, {**STACK_TAGS, **SENT}
    ),
    "rewrite the stack's listener": Request(f"{ELB}ModifyListener", STACK_LISTENER, STACK_TAGS),
    "delete the stack's listener": Request(f"{ELB}DeleteListener", STACK_LISTENER, STACK_TAGS),
    "add a rule to the stack's listener": Request(
        f"{ELB}CreateRule", STACK_LISTENER, {**STACK_TAGS, **SENT}
    ),
    "swap the stack's certificate": Request(
        f"{ELB}AddListenerCertificates", STACK_LISTENER, STACK_TAGS
    ),
    "tag the stack's listener as the controller's": Request(
        f"{ELB}AddTags", STACK_LISTENER, {**STACK_TAGS, **SENT}
    ),
    "put its address behind another stack's split": Request(
        f"{ELB}RegisterTargets", _elb("targetgroup/traffic-baseline-9d2f/1a2b"), PROD_TAGS
    ),
    "put its address behind any other load balancer of the account": Request(
        f"{ELB}RegisterTargets", _elb("targetgroup/payments-api/6d0ecf831eec9f09"), {}
    ),
    "take another application's targets out": Request(
        f"{ELB}DeregisterTargets", _elb("targetgroup/payments-api/6d0ecf831eec9f09"), {}
    ),
}

# The writes the original grants on every resource without a condition, each narrowed here.
DANGEROUS = {
    "ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress",
    "ec2:CreateSecurityGroup",
    *(f"{ELB}{a}" for a in (
        "CreateListener", "DeleteListener", "CreateRule", "DeleteRule", "ModifyListener",
        "AddListenerCertificates", "RemoveListenerCertificates", "ModifyRule",
        "SetRulePriorities", "AddTags", "RemoveTags", "RegisterTargets", "DeregisterTargets",
    )),
}  # fmt: skip
# Unconditioned writes on "*" the narrowing keeps as upstream wrote them, and why.
KEPT = {
    f"{ELB}SetWebAcl": "no resource type, no condition key; wafv2:AssociateWebACL needs it",
    **dict.fromkeys(
        ["waf-regional:AssociateWebACL", "waf-regional:DisassociateWebACL",
         "wafv2:AssociateWebACL", "wafv2:DisassociateWebACL",
         "shield:CreateProtection", "shield:DeleteProtection"],
        "the ACL or protection an Ingress annotation names, on the controller's load "
        "balancers: not narrowed in this change (no tag condition keys them to those)",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def original() -> dict:
    return upstream_policy()


@pytest.fixture(scope="module")
def narrow(original) -> dict:
    """What the role is granted: the managed policy and the inline one with what MOVED."""
    managed, inline = narrowed(original, SCOPE), moved(original, SCOPE)
    return {**managed, "Statement": managed["Statement"] + inline["Statement"]}


def _actions(document) -> set[str]:
    return {a for s in document["Statement"] for a in listed(s["Action"])}


def test_every_action_of_the_original_is_still_granted(original, narrow):
    assert _actions(narrow) == _actions(original)


def test_statements_it_does_not_change_are_upstream_s_verbatim(original, narrow):
    changed = [s for s in original["Statement"] if "Condition" not in s
               and frozenset(listed(s["Action"])) in {*CHANGES, *MOVED}]  # fmt: skip
    kept = [s for s in original["Statement"] if s not in changed]
    assert len(changed) == len(CHANGES) + len(MOVED) == 6
    assert all(s in narrow["Statement"] for s in kept)


def test_target_registration_is_in_the_inline_policy_only(original):
    registration = {f"{ELB}RegisterTargets", f"{ELB}DeregisterTargets"}
    assert not registration & _actions(narrowed(original, SCOPE))
    assert _actions(moved(original, SCOPE)) == registration


@pytest.mark.parametrize("calls", sorted(CONTROLLER_CALLS))
def test_every_call_of_the_controller_is_still_allowed(original, narrow, calls):
    requests = CONTROLLER_CALLS[calls]
    assert all(allows(original, r) for r in requests)  # what the controller has today
    refused = [str(r) for r in requests if not allows(narrow, r)]
    assert not refused, f"{calls}: refused\n  " + "\n  ".join(refused)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_any_holder_of_the_role_could_do_is_refused(original, narrow, case):
    request = REFUSED[case]
    assert allows(original, request), f"the original already refuses: {case}"
    assert not allows(narrow, request), case


def test_each_dangerous_action_now_carries_its_condition(original, narrow):
    def grants(document, action):
        return [s for s in document["Statement"]
                if s["Effect"] == "Allow" and action in listed(s["Action"])]  # fmt: skip

    for action in sorted(DANGEROUS):
        assert any("Condition" not in s for s in grants(original, action)), action
        for s in grants(narrow, action):
            keys = json.dumps(s.get("Condition", {}))
            in_vpc = listed(s["Resource"]) == [VPC]  # CreateSecurityGroup's VPC: the stack's
            owned = all(f"aws:ResourceTag/{k}" in keys for k, _ in OWNER)  # the stack's tags
            assert CLUSTER_TAG in keys or "ec2:Vpc" in keys or in_vpc or owned, (action, s)


def _open(resource: str) -> bool:
    """A resource of some other owner's too: "*", or a pattern whose wildcard spans a name
    (`targetgroup/*/*`, every target group of the account), not only the Region and account
    fields of an ARN that names one resource of the stack."""
    parts = resource.split(":", 5)
    return resource == "*" or (len(parts) == 6 and "*" in parts[5])


def test_no_other_write_on_resources_of_others_is_unconditioned(narrow):
    loose = {
        a
        for s in narrow["Statement"]
        if "Condition" not in s and any(_open(r) for r in listed(s["Resource"]))
        for a in listed(s["Action"])
        if access_level(a) not in ("Read", "List")
    }
    assert loose == set(KEPT)


def test_a_pattern_over_every_target_group_counts_as_open():
    assert _open("*") and _open("arn:aws:elasticloadbalancing:*:*:targetgroup/*/*")
    assert not _open(VPC) and not _open("arn:aws:ec2:*:*:vpc/vpc-0aaaaaaaaaaaaaaaa")


def test_a_pin_whose_statements_moved_is_refused(original):
    gone = {**original, "Statement": [s for s in original["Statement"]
                                      if f"{ELB}RegisterTargets" not in listed(s["Action"])]}  # fmt: skip
    with pytest.raises(UpstreamPolicyMoved, match="RegisterTargets"):
        moved(gone, SCOPE)
    shifted = {**original, "Statement": [s for s in original["Statement"]
                                         if "ec2:CreateSecurityGroup" not in listed(s["Action"])]}  # fmt: skip
    with pytest.raises(UpstreamPolicyMoved, match="ec2:CreateSecurityGroup"):
        narrowed(shifted, SCOPE)


def test_the_narrowed_policy_fits_a_managed_policy(original):
    """IAM holds a managed policy to 6,144 characters, white space not counted (IAM User Guide,
    "IAM and AWS STS quotas"): here with the longest Region name and a VPC id at full length."""
    longest = Scope("aws", "arn:aws:ec2:ap-southeast-5:123456789012:vpc/vpc-0123456789abcdef0")
    text = json.dumps(narrowed(original, longest))
    assert len(re.sub(r"\s", "", text)) <= 6144
