"""What in-cluster benchmark runs run as: an IRSA role (its permissions: specs/benchmark.py) and
the service account bound to it, in the endpoint's namespace. The runs themselves (a Job each)
are started by `hyperpod-dpd benchmark run --stack S`, not by `pulumi up`: they are measurements,
not desired state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

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
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the endpoints' namespaces


class BenchmarkAccess(pulumi.ComponentResource):
    def __init__(
        self, name: str, args: BenchmarkAccessArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__(BENCHMARK_ACCESS, name, None, opts)
        spec = args.spec
        account = AwsServiceAccount(
            spec.namespace, spec.service_account, spec.policy, args.tags, spec.more_namespaces
        )
        self.service_account, _ = aws_service_account(
            name, account, args.cluster, args.outputs, self, args.depends_on
        )
        self.register_outputs({
            "serviceAccount": spec.service_account,
            "namespace": spec.namespace,
            "namespaces": [spec.namespace, *spec.more_namespaces],
        })  # fmt: skip
