"""The weighted split in front of several endpoints, registered from its spec (specs/traffic.py
says why an ALB listener and TargetGroupBindings, not an Ingress).

Weights live in the listener alone: `pulumi up` after a change of `hyperpod-dpd:traffic` updates
the listener in place (ALB ModifyListener) and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from core.vocabulary import TRAFFIC_SPLIT
from infra.bucket import SecureBucket, SecureBucketArgs
from program.outputs import Outputs
from program.security_group_rules import create_rules
from specs.traffic import CHAT_PATH, TrafficSpec


@dataclass(frozen=True)
class TrafficArgs:
    spec: TrafficSpec
    outputs: Outputs  # resolves the VPC and subnets; publishes the ALB's and groups' ARNs
    provider: k8s.Provider
    # The routers (the endpoints) and the Load Balancer Controller (the operator add-on).
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class TrafficSplit(pulumi.ComponentResource):
    url: pulumi.Output[str]

    def __init__(self, name: str, args: TrafficArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(TRAFFIC_SPLIT, name, None, opts)
        out, spec = args.outputs, args.spec
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            spec.security_group.name, **out.resolve(spec.security_group.kwargs()), opts=child
        )
        out.publish(spec.security_group.name, id=group.id)
        create_rules(spec.rules, out, child)
        logs = None
        if spec.logs is not None:
            # Before the load balancer: ELB checks it may write there when logging is enabled.
            logs = SecureBucket(spec.logs.name, SecureBucketArgs(spec.logs, out), opts=child)
        alb = aws.lb.LoadBalancer(
            spec.load_balancer.name,
            **out.resolve(spec.load_balancer.kwargs()),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[logs.policy] if logs is not None else []
            ),
        )
        out.publish(spec.load_balancer.name, arn=alb.arn)
        bindings = []
        for key, desired in spec.target_groups.items():
            tg = aws.lb.TargetGroup(desired.name, **out.resolve(desired.kwargs()), opts=child)
            out.publish(desired.name, arn=tg.arn)
            binding = spec.bindings[key]
            bindings.append(
                k8s.apiextensions.CustomResource(
                    binding.name,
                    **out.resolve(binding.kwargs()),
                    opts=pulumi.ResourceOptions(
                        parent=self, provider=args.provider, depends_on=args.depends_on
                    ),
                )
            )
        aws.lb.Listener(
            spec.listener.name,
            **out.resolve(spec.listener.kwargs()),
            opts=pulumi.ResourceOptions(parent=self, depends_on=bindings),
        )
        scheme = "https://" if spec.https else "http://"
        self.url = pulumi.Output.concat(scheme, alb.dns_name, CHAT_PATH)
        self.register_outputs({"url": self.url})
