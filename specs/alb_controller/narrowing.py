"""The controller's policy narrowed to what the controller does: a pure function of the vendored
original (upstream.py), the stack's VPC and the stack's tags.

The original grants, unconditioned: ingress rule writes on every security group of the account
(`ec2:AuthorizeSecurityGroupIngress`/`Revoke...` on "*"), `ec2:CreateSecurityGroup` in every VPC,
listener and rule writes on every load balancer (`elasticloadbalancing:CreateListener`,
`ModifyListener`, `CreateRule`, ... on "*") and target registration in every target group
(`RegisterTargets`/`DeregisterTargets` on `targetgroup/*/*`): a pod holding the role could open
any security group of the account, rewrite the stack's own listener (the traffic split's,
specs/traffic/__init__.py) or put its own address behind any load balancer of the account.
Each change below replaces one such statement of the original, found by its exact actions (and
no condition); a change whose statement the original lacks is refused, so raising the pin to a
file that moved its statements fails here instead of deploying a broad grant. Every other
statement is kept as upstream wrote it, and every action of the original is still granted
(tests/specs/alb_controller/test_narrowing.py holds both).

What the controller does, read in its source at the pinned tag (kubernetes-sigs/
aws-load-balancer-controller v2.13.0, core/versions.py; paths below are in that repository):
- Everything it creates carries the tag `elbv2.k8s.aws/cluster` = its cluster's name
  (pkg/shared_constants/tag_keys.go TagKeyK8sCluster; pkg/deploy/tracking/provider.go
  StackTags/ResourceTags), given in the creating request itself: security groups
  (pkg/deploy/ec2/security_group_manager.go Create; pkg/networking/backend_sg_provider.go
  allocateBackendSG and buildBackendSGTags, the shared backend group), load balancers and target
  groups (pkg/deploy/elbv2/load_balancer_manager.go, target_group_manager.go), listeners and
  rules (pkg/deploy/elbv2/listener_manager.go Create, listener_rule_manager.go Create: under the
  feature gate ListenerRulesTagging, on by default, pkg/config/feature_gates.go
  NewFeatureGates; neither the controller's chart, helm/aws-load-balancer-controller/values.yaml
  controllerConfig.featureGates, nor the inference operator chart's `alb` values, in
  aws/sagemaker-hyperpod-cli, turn it off). Later tag changes send only the tags that differ
  (pkg/deploy/elbv2/tagging_manager.go ReconcileTags), so the cluster tag is never re-sent.
- It writes ingress rules into one kind of group it never tagged: the group of each target pod's
  network interface (pkg/targetgroupbinding/networking_manager.go resolveEndpointSGForENI: the
  interface's only group, or the one tagged kubernetes.io/cluster/<name>), here the HyperPod
  nodes' group (specs/nodes.py). All of it is in the cluster's VPC: the backend group is created
  in the controller's VPC (backend_sg_provider.go), the endpoint groups whose rules it cleans up
  are looked up in it (networking_manager.go fetchEndpointSGsFromAWS), and the pods' network
  interfaces are the HyperPod nodes', in the stack's subnets.
- It registers and deregisters targets in the target group each TargetGroupBinding names
  (pkg/targetgroupbinding/targets_manager.go RegisterTargets: tgb.Spec.TargetGroupARN), nothing
  else: those of its own Ingresses and Services, which it created with the cluster tag
  (target_group_manager.go Create), and those the stack binds to its routers, the traffic
  split's (specs/traffic/__init__.py), which carry the stack's tags (core/vocabulary.py STACK_TAG).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Statement = dict[str, Any]
CLUSTER_TAG = "elbv2.k8s.aws/cluster"  # TagKeyK8sCluster
EC2 = "ec2:"
ELB = "elasticloadbalancing:"
# Conditions as the original itself writes them for its tag-scoped statements.
REQUEST_TAGGED = {"Null": {f"aws:RequestTag/{CLUSTER_TAG}": "false"}}  # set in this request
RESOURCE_TAGGED = {"Null": {f"aws:ResourceTag/{CLUSTER_TAG}": "false"}}  # the target carries it
RETAGGED = {  # other tags of a tagged resource; the cluster tag itself neither set nor moved
    "Null": {f"aws:RequestTag/{CLUSTER_TAG}": "true", f"aws:ResourceTag/{CLUSTER_TAG}": "false"}
}


@dataclass(frozen=True)
class Scope:
    """Where the stack's controller works: its partition and VPC (`vpc_arn` a placeholder), and
    the tags (key, value) of the stack's own resources it binds (the split's target groups)."""

    partition: str
    vpc_arn: str
    owner_tags: tuple[tuple[str, str], ...] = ()

    @property
    def security_groups(self) -> str:
        """Every security group, as the original names them (Region and account open: the VPC
        ARN, which names both, is what scopes them; IAM counts a managed policy's characters)."""
        return f"arn:{self.partition}:ec2:*:*:security-group/*"


def _security_group_rules(original: Statement, scope: Scope) -> list[Statement]:
    # Ingress rules on any group of the account -> on groups of the stack's VPC. The groups the
    # controller created keep the original's tag-scoped grant (its statement of Authorize/
    # Revoke/DeleteSecurityGroup with aws:ResourceTag/elbv2.k8s.aws/cluster); this one is for
    # the rules it writes into the nodes' group, which it never tagged (module docstring). ec2:Vpc
    # is a condition key of the security-group resource of both actions, an ARN (Service
    # Authorization Reference, Amazon EC2,
    # https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html);
    # the resource names groups only, as IAM's own example scopes these actions
    # (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_examples_ec2_securitygroups-vpc.html).
    return [
        {
            **original,
            "Resource": scope.security_groups,
            "Condition": {"ArnEquals": {"ec2:Vpc": scope.vpc_arn}},
        }
    ]


def _create_security_group(original: Statement, scope: Scope) -> list[Statement]:
    # CreateSecurityGroup is authorized on the new group and on the VPC it goes into (Service
    # Authorization Reference, Amazon EC2). The group: only with the cluster tag in the request,
    # which both of the controller's creations send (security_group_manager.go Create,
    # backend_sg_provider.go allocateBackendSG); the VPC: the stack's, where both create.
    return [
        {**original, "Resource": scope.security_groups, "Condition": REQUEST_TAGGED},
        {**original, "Resource": scope.vpc_arn},
    ]


def _listener_and_rule_changes(original: Statement, scope: Scope) -> list[Statement]:
    # Create/DeleteListener, Create/DeleteRule on any load balancer -> on the controller's own.
    # IAM authorizes CreateListener on the load balancer, DeleteListener and CreateRule on the
    # listener, DeleteRule on the rule (Service Authorization Reference, Elastic Load Balancing
    # V2, https://docs.aws.amazon.com/service-authorization/latest/reference/list_awselasticloadbalancingv2.html),
    # and each carries the cluster tag: the load balancer always (the original grants
    # CreateLoadBalancer only with it), listeners and rules from their creation
    # (ListenerRulesTagging). The stack's own load balancer and listener carry no such tag.
    return [{**original, "Condition": RESOURCE_TAGGED}]


def _listener_and_rule_tags(original: Statement, scope: Scope) -> list[Statement]:
    # AddTags/RemoveTags on every listener and rule: left so, the role could put the cluster
    # tag on the stack's own listener and pass every condition above. Listeners and rules get
    # the original's form for load balancers and target groups instead: other tags of resources
    # that carry the cluster tag, and tags in the creating request (ELB: "API permissions to tag
    # resources during creation", elasticloadbalancing:CreateAction,
    # https://docs.aws.amazon.com/elasticloadbalancing/latest/userguide/tagging-resources-during-creation.html),
    # which CreateListener and CreateRule send (listener_manager.go, listener_rule_manager.go).
    return [
        {**original, "Condition": RETAGGED},
        {
            "Effect": "Allow",
            "Action": [f"{ELB}AddTags"],
            # Any resource: the condition limits it to the tags of CreateListener and CreateRule
            # requests, which the grants above allow on tagged load balancers and listeners only
            # (and a managed policy holds 6,144 characters: the four ARNs do not fit twice).
            "Resource": "*",
            "Condition": {
                "StringEquals": {f"{ELB}CreateAction": ["CreateListener", "CreateRule"]},
                **REQUEST_TAGGED,
            },
        },
    ]


def _listener_and_rule_settings(original: Statement, scope: Scope) -> list[Statement]:
    # ModifyListener, its certificates, ModifyRule, SetRulePriorities on any load balancer ->
    # on listeners and rules that carry the cluster tag (the controller's: listener_manager.go
    # Update, listener_rule_manager.go UpdateRules and SetRulePriorities act on its own).
    # SetWebAcl stays as upstream grants it: IAM gives it no resource type and no condition key
    # (Service Authorization Reference), and it is what wafv2:AssociateWebACL needs on the load
    # balancer (its dependent action there), which the controller calls for a web ACL an
    # Ingress names.
    web_acl = f"{ELB}SetWebAcl"
    return [
        {**original, "Action": [web_acl]},
        {
            **original,
            "Action": [a for a in original["Action"] if a != web_acl],
            "Condition": RESOURCE_TAGGED,
        },
    ]


def _target_registration(original: Statement, scope: Scope) -> list[Statement]:
    # Register/DeregisterTargets on every target group of the account -> on the controller's
    # own (the cluster tag, as the original scopes its other target group writes) and on the
    # stack's (its tags, all of them: another stack of the project differs in one). Left as
    # upstream wrote it, a pod holding the role could put its own address behind any load
    # balancer of the account. IAM authorizes both actions on the target group, whose
    # aws:ResourceTag keys it evaluates (Service Authorization Reference, Elastic Load
    # Balancing V2). The split's own groups stay open to the role: its TargetGroupBindings are
    # exactly that grant.
    statements = [{**original, "Condition": RESOURCE_TAGGED}]
    if scope.owner_tags:
        owned = {f"aws:ResourceTag/{k}": v for k, v in scope.owner_tags}
        statements.append({**original, "Condition": {"StringEquals": owned}})
    return statements


Change = Callable[[Statement, Scope], list[Statement]]
# The original's unconditioned statements whose narrowed form goes to the role's inline policy
# (moved()) instead of the managed one: a managed policy holds 6,144 characters, white space not
# counted (IAM User Guide, "IAM and AWS STS quotas"), and the narrowed one takes nearly all.
MOVED: dict[frozenset[str], Change] = {
    frozenset({f"{ELB}RegisterTargets", f"{ELB}DeregisterTargets"}): _target_registration,
}
# The original's unconditioned statement each change replaces, by its exact actions.
CHANGES: dict[frozenset[str], Change] = {
    frozenset({f"{EC2}AuthorizeSecurityGroupIngress", f"{EC2}RevokeSecurityGroupIngress"}): (
        _security_group_rules
    ),
    frozenset({f"{EC2}CreateSecurityGroup"}): _create_security_group,
    frozenset(
        f"{ELB}{a}" for a in ("CreateListener", "DeleteListener", "CreateRule", "DeleteRule")
    ): _listener_and_rule_changes,
    frozenset({f"{ELB}AddTags", f"{ELB}RemoveTags"}): _listener_and_rule_tags,
    frozenset(
        f"{ELB}{a}"
        for a in (
            "SetWebAcl",
            "ModifyListener",
            "AddListenerCertificates",
            "RemoveListenerCertificates",
            "ModifyRule",
            "SetRulePriorities",
        )
    ): _listener_and_rule_settings,
}


class UpstreamPolicyMoved(ValueError):
    pass


def _actions(statement: Mapping[str, Any]) -> frozenset[str]:
    action = statement.get("Action", [])
    return frozenset([action] if isinstance(action, str) else action)


def _split(original: Mapping[str, Any], scope: Scope) -> tuple[list[Statement], list[Statement]]:
    """The managed policy's statements and the inline policy's: each statement CHANGES names
    replaced in place, each MOVED names replaced in the inline policy, the rest as they are."""
    kept: list[Statement] = []
    moved: list[Statement] = []
    replaced: set[frozenset[str]] = set()
    for s in original["Statement"]:
        actions = _actions(s)
        change = None if "Condition" in s else CHANGES.get(actions) or MOVED.get(actions)
        if change is None:
            kept.append(dict(s))
            continue
        replaced.add(actions)
        (moved if actions in MOVED else kept).extend(change(dict(s), scope))
    missing = [sorted(a) for a in (*CHANGES, *MOVED) if a not in replaced]
    if missing:
        raise UpstreamPolicyMoved(
            f"the vendored policy has no unconditioned statement of {missing}: the pinned "
            "release changed them; review specs/alb_controller/narrowing.py against it"
        )
    return kept, moved


def narrowed(original: Mapping[str, Any], scope: Scope) -> dict[str, Any]:
    """The managed policy: `original` with each statement CHANGES names replaced by its
    narrowed statements, in place, those MOVED names left out; the rest as they are."""
    return {"Version": original["Version"], "Statement": _split(original, scope)[0]}


def moved(original: Mapping[str, Any], scope: Scope) -> dict[str, Any]:
    """The role's inline policy: the narrowed form of the statements MOVED names."""
    return {"Version": original["Version"], "Statement": _split(original, scope)[1]}


def document_text(original: Mapping[str, Any], scope: Scope) -> str:
    """The narrowed policy as the engine receives it (JSON text, placeholders inside)."""
    return json.dumps(narrowed(original, scope))


def moved_text(original: Mapping[str, Any], scope: Scope) -> str:
    """The inline policy as the engine receives it."""
    return json.dumps(moved(original, scope))
