"""What in-cluster benchmark runs run as: an IRSA role (its permissions: specs/benchmark.py) and
the service account bound to it, in the endpoint's namespace. The runs themselves (a Job each)
are started by `hyperpod-dpd benchmark run --stack S`, not by `pulumi up`: they are measurements,
not desired state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from core.vocabulary import BENCHMARK_ACCESS
from infra.iam import inline_policy, irsa_trust
from infra.refs import Outputs
from specs.benchmark import BenchmarkAccessSpec


@dataclass(frozen=True)
class BenchmarkAccessArgs:
    spec: BenchmarkAccessSpec
    outputs: Outputs  # resolves the model bucket's ARN and the role's id
    provider: k8s.Provider
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    tags: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the endpoint's namespace


class BenchmarkAccess(pulumi.ComponentResource):
    service_account: k8s.core.v1.ServiceAccount

    def __init__(
        self, name: str, args: BenchmarkAccessArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(BENCHMARK_ACCESS, name, None, opts)
        spec, out = args.spec, args.outputs
        role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=irsa_trust(
                args.oidc_provider_arn, args.oidc_issuer_url, spec.namespace, spec.service_account
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        out.publish(f"{name}-role", id=role.id)
        policy = inline_policy(spec.policy, out, self)
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account",
            metadata={
                "name": spec.service_account,
                "namespace": spec.namespace,
                "annotations": {"eks.amazonaws.com/role-arn": role.arn},
            },
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=[*args.depends_on, policy]
            ),
        )
        self.register_outputs({"serviceAccount": spec.service_account, "namespace": spec.namespace})
