"""The rules AWS enforces on inputs that CloudFormation's registry schemas leave out, as JSON
Schema at a property path of a CloudFormation type ("*": each item of a list). The values and
their sources are core/aws/aws_rules.py's, the ones the settings checks use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.aws.aws_rules import (
    ALB_CONDITION_VALUE_LENGTH_MAX,
    ALB_CONDITION_VALUES_MAX,
    ALB_CONDITIONS_URL,
    ALB_FORWARD_TARGET_GROUPS_MAX,
    ALB_QUOTAS_URL,
    ALB_WEIGHT_MAX,
    ALB_WEIGHT_MIN,
    EC2_DESCRIPTION_MAX,
    EC2_DESCRIPTION_PATTERN,
    ELB_NAME_PATTERN,
    TARGET_GROUP_NAME_PATTERN,
)

EC2_API = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference"
ELB_API = "https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference"


@dataclass(frozen=True)
class Rule:
    cfn: str  # the CloudFormation type
    path: str  # a dotted property path, "*" for each item of a list
    schema: dict[str, Any]  # what every value there satisfies
    source: str


_DESCRIPTION = {
    "type": "string",
    "maxLength": EC2_DESCRIPTION_MAX,
    "pattern": EC2_DESCRIPTION_PATTERN,
}


def _forward_rules(cfn: str, actions: str) -> tuple[Rule, ...]:
    """A forward action's limits: at most 5 target groups, each weighted 0 to 999."""
    forward = f"{actions}.*.ForwardConfig.TargetGroups"
    return (
        Rule(cfn, forward, {"type": "array", "maxItems": ALB_FORWARD_TARGET_GROUPS_MAX},
             ALB_QUOTAS_URL),
        Rule(cfn, f"{forward}.*.Weight",
             {"type": "integer", "minimum": ALB_WEIGHT_MIN, "maximum": ALB_WEIGHT_MAX},
             f"{ELB_API}/API_TargetGroupTuple.html"),
    )  # fmt: skip


RULES: tuple[Rule, ...] = (
    # A group's GroupDescription has this rule in cfn-lint's schema; the rules' have none.
    Rule("AWS::EC2::SecurityGroupIngress", "Description", _DESCRIPTION,
         f"{EC2_API}/API_IpRange.html"),
    Rule("AWS::EC2::SecurityGroupEgress", "Description", _DESCRIPTION,
         f"{EC2_API}/API_IpRange.html"),
    Rule("AWS::EC2::SecurityGroup", "SecurityGroupIngress.*.Description", _DESCRIPTION,
         f"{EC2_API}/API_IpRange.html"),
    Rule("AWS::EC2::SecurityGroup", "SecurityGroupEgress.*.Description", _DESCRIPTION,
         f"{EC2_API}/API_IpRange.html"),
    # "Constraints: Up to 255 ASCII characters in length."
    Rule("AWS::EC2::PlacementGroup", "GroupName",
         {"type": "string", "maxLength": 255, "pattern": r"^[\x00-\x7f]*$"},
         f"{EC2_API}/API_CreatePlacementGroup.html"),
    # A listener's forward and the split's (a listener rule's action) alike.
    *_forward_rules("AWS::ElasticLoadBalancingV2::Listener", "DefaultActions"),
    *_forward_rules("AWS::ElasticLoadBalancingV2::ListenerRule", "Actions"),
    Rule("AWS::ElasticLoadBalancingV2::ListenerRule", "Conditions.*.HttpHeaderConfig.Values",
         {"type": "array", "maxItems": ALB_CONDITION_VALUES_MAX}, ALB_CONDITIONS_URL),
    Rule("AWS::ElasticLoadBalancingV2::ListenerRule", "Conditions.*.HttpHeaderConfig.Values.*",
         {"type": "string", "maxLength": ALB_CONDITION_VALUE_LENGTH_MAX}, ALB_CONDITIONS_URL),
    Rule("AWS::ElasticLoadBalancingV2::LoadBalancer", "Name",
         {"type": "string", "pattern": ELB_NAME_PATTERN}, f"{ELB_API}/API_CreateLoadBalancer.html"),
    Rule("AWS::ElasticLoadBalancingV2::TargetGroup", "Name",
         {"type": "string", "pattern": TARGET_GROUP_NAME_PATTERN},
         f"{ELB_API}/API_CreateTargetGroup.html"),
)  # fmt: skip
