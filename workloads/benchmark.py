"""What in-cluster benchmark runs run as: an IRSA role (its permissions: specs/benchmark.py) and
the service account bound to it, in the stack's benchmark namespace, which this component
creates (Pod Security `restricted`, and no way to the instance metadata service). The runs
themselves (a Job each) are started by `hyperpod-dpd benchmark run --stack S`, not by
`pulumi up`: they are measurements, not desired state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from core.vocabulary import BENCHMARK_ACCESS
from program.outputs import Outputs
from specs.benchmark import BenchmarkAccessSpec
from workloads.service_account import AwsServiceAccount, ClusterAccess, aws_service_account


@dataclass(frozen=True)
class BenchmarkAccessArgs:
    spec: BenchmarkAccessSpec
    outputs: Outputs  # resolves the model bucket's ARN and the role's id
    cluster: ClusterAccess
    tags: dict[str, str] = field(default_factory=dict)


class BenchmarkAccess(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace  # where the runs (and the stack's other clients) run

    def __init__(
        self, name: str, args: BenchmarkAccessArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(BENCHMARK_ACCESS, name, None, opts)
        spec, out = args.spec, args.outputs
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=args.cluster.provider)
        self.namespace = namespace = k8s.core.v1.Namespace(
            spec.namespace_resource.name,
            **out.resolve(spec.namespace_resource.kwargs()),
            opts=k8s_opts,
        )
        # The account, which a run's Job needs, exists only once its pods are kept from the
        # instance metadata service.
        ready: list[pulumi.Resource] = [namespace]
        if spec.metadata_policy is not None:
            ready.append(
                k8s.networking.v1.NetworkPolicy(
                    spec.metadata_policy.name,
                    **out.resolve(spec.metadata_policy.kwargs()),
                    opts=pulumi.ResourceOptions.merge(
                        k8s_opts, pulumi.ResourceOptions(depends_on=[namespace])
                    ),
                )
            )
        account = AwsServiceAccount(spec.namespace, spec.service_account, spec.policy, args.tags)
        self.service_account, _ = aws_service_account(name, account, args.cluster, out, self, ready)
        self.register_outputs({
            "serviceAccount": spec.service_account,
            "namespace": spec.namespace,
        })  # fmt: skip
