"""The weighted split in front of several endpoints, registered from its spec (specs/traffic/__init__.py
says why an ALB listener and TargetGroupBindings, not an Ingress).

Weights live in the listener rule alone: `pulumi up` after a change of `hyperpod-dpd:traffic`
updates that rule in place (ALB ModifyRule) and nothing else; so does a change of the API keys
(trafficListener.apiKeyNames), which adds or drops a generated key and the Secrets of the newest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pulumi_random as random

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
    # The namespace of the in-cluster clients the key's Secret is for (the benchmark namespace).
    clients_namespace: pulumi.Resource | None = None


class TrafficSplit(pulumi.ComponentResource):
    url: pulumi.Output[str]
    api_key: pulumi.Output[str]  # the newest key, a secret: what clients are handed

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
        out.publish(spec.load_balancer.name, arn=alb.arn, dnsName=alb.dns_name, zoneId=alb.zone_id)
        self._create_dns(spec, out, child)
        keys = self._create_keys(spec, out, child)
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
        listener = aws.lb.Listener(
            spec.listener.name,
            **out.resolve(spec.listener.kwargs()),
            opts=pulumi.ResourceOptions(parent=self, depends_on=bindings),
        )
        out.publish(spec.listener.name, arn=listener.arn)
        aws.lb.ListenerRule(spec.forward.name, **out.resolve(spec.forward.kwargs()), opts=child)
        self._create_key_secrets(spec, out, args)
        scheme = "https://" if spec.https else "http://"
        host = spec.dns.domain_name if spec.dns is not None else alb.dns_name
        self.url = pulumi.Output.concat(scheme, host, CHAT_PATH)
        self.api_key = keys[-1].result
        self.register_outputs({"url": self.url, "apiKey": self.api_key})

    def _create_dns(self, spec: TrafficSpec, out: Outputs, child: pulumi.ResourceOptions) -> None:
        """The clients' name: the zone associated with the stack's VPC, the alias record in it."""
        if spec.dns is None:
            return
        dns = spec.dns
        aws.route53.ZoneAssociation(
            dns.association.name, **out.resolve(dns.association.kwargs()), opts=child
        )
        aws.route53.Record(dns.record.name, **out.resolve(dns.record.kwargs()), opts=child)

    def _create_keys(
        self, spec: TrafficSpec, out: Outputs, child: pulumi.ResourceOptions
    ) -> list[random.RandomPassword]:
        """One generated key per name: created once, kept in the state (encrypted, a secret
        output), replaced only when its name is (a rotation adds a name, then drops the old)."""
        keys = []
        for desired in spec.api_keys:
            key = random.RandomPassword(desired.name, **out.resolve(desired.kwargs()), opts=child)
            out.publish(desired.name, result=key.result)
            keys.append(key)
        return keys

    def _create_key_secrets(self, spec: TrafficSpec, out: Outputs, args: TrafficArgs) -> None:
        """The newest key for in-cluster clients, in their namespace (once it exists)."""
        after = [args.clients_namespace] if args.clients_namespace is not None else []
        for desired in spec.key_secrets:
            k8s.core.v1.Secret(
                desired.name,
                **out.resolve(desired.kwargs()),
                opts=pulumi.ResourceOptions(
                    parent=self, provider=args.provider, depends_on=[*args.depends_on, *after]
                ),
            )
