"""The VPC's subnets: one GPU subnet in the capacity AZ, private and public subnets per AZ.

The layout (core/aws/subnets.py) is pure CIDR arithmetic; this adds what the engine receives for
each subnet, so the single-AZ rule judges the subnets before the VPC exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.aws.subnets import SubnetPlan, plan_subnets
from core.refs import ref
from core.vocabulary import NETWORK, SUBNET_TYPE, TIER_TAG
from settings.stack import StackSettings
from specs.base import Desired
from specs.iam import allow, role_policy

# The AWS Load Balancer Controller's discovery tag (docs/deploy/subnet_discovery.md of
# kubernetes-sigs/aws-load-balancer-controller): the private subnets take the internal load
# balancers it creates (the inference operator's). The public subnets carry no
# kubernetes.io/role/elb: nothing of the stack is internet-facing (the traffic split is internal
# and Pulumi's). The missing tag alone does not keep an internet-facing load balancer out (the
# controller then falls back to the subnets that route to the internet gateway); the
# controller's role is denied creating one (specs/alb_controller/scheme.py).
_ELB_ROLE_TAGS = {"private": "kubernetes.io/role/internal-elb"}


@dataclass(frozen=True)
class SubnetSpec:
    plan: SubnetPlan
    resource: Desired


def subnet_specs(name: str, s: StackSettings, tags: dict[str, str]) -> list[SubnetSpec]:
    """Every subnet of the Network component `name`, keyed by AZ ID (never list position)."""
    plans = plan_subnets(
        s.network.vpc_cidr, s.availability_zone_id, list(s.network.control_plane_az_ids)
    )
    specs = []
    for plan in plans:
        extra = {TIER_TAG: plan.tier}
        if plan.tier in _ELB_ROLE_TAGS:
            extra[_ELB_ROLE_TAGS[plan.tier]] = "1"
        props = {
            "vpcId": ref(f"{name}-vpc", "id"),
            "cidrBlock": plan.cidr,
            "availabilityZoneId": plan.az_id,
            "mapPublicIpOnLaunch": False,
            "tags": {**tags, "Name": f"{name}-{plan.key}", **extra},
        }
        specs.append(
            SubnetSpec(plan, Desired(SUBNET_TYPE, f"{name}-{plan.key}", (NETWORK,), props))
        )
    return specs


def flow_log_group_name(stack: str) -> str:
    return f"/hyperpod-dpd/{stack}/vpc-flow-logs"


def flow_logs_policy(
    name: str, stack: str, account_id: str, region: str, partition: str
) -> Desired:
    """What VPC Flow Logs' delivery role may do: each action the VPC user guide lists for it
    ("IAM role for publishing flow logs to CloudWatch Logs",
    https://docs.aws.amazon.com/vpc/latest/userguide/flow-logs-iam-role.html), on the stack's
    flow log group and its streams; logs:DescribeLogGroups takes no resource but "*" (IAM's
    Service Authorization Reference, CloudWatch Logs). `account_id` is a placeholder."""
    group = f"arn:{partition}:logs:{region}:{account_id}:log-group:{flow_log_group_name(stack)}"
    return role_policy(
        f"{name}-flow-logs-policy",
        (NETWORK,),
        ref(f"{name}-flow-logs-role", "id"),
        allow(
            [*FLOW_LOGS_GROUP_ACTIONS],
            [group, f"{group}:*"],
            "DeliverFlowLogs",
        ),
        allow(["logs:DescribeLogGroups"], ["*"], "FindFlowLogGroup"),
    )


# The guide's list but logs:DescribeLogGroups, scoped to the group: it exists (the stack creates
# it before the flow log), CreateLogGroup is listed all the same.
FLOW_LOGS_GROUP_ACTIONS = (
    "logs:CreateLogGroup",
    "logs:CreateLogStream",
    "logs:PutLogEvents",
    "logs:DescribeLogStreams",
)
