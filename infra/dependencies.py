"""The HyperPod dependencies Helm chart, installed before the HyperPod cluster is created.

SageMaker rejects an EKS-orchestrated cluster "missing one or more required dependencies"
without it (aws/sagemaker-hyperpod-cli PR #161; alchemy-run/alchemy `examples/aws-hyperpod`; the
AWS guide sagemaker-hyperpod-eks-install-packages-using-helm-chart): health-monitoring agent, deep health checks, NVIDIA and
EFA device plugins, training and MPI operators.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from core.versions import HYPERPOD_DEPENDENCIES_CHART
from core.vocabulary import GPU_RESOURCE, SYSTEM_NAMESPACE
from infra.charts import resolve_chart

GPU_TAINT_KEY = GPU_RESOURCE
# The EFA device plugin's own tolerations (chart values.yaml) plus the GPU taint this stack puts
# on GPU nodes; without it the plugin would not run there and no EFA device would be advertised.
EFA_PLUGIN_TOLERATIONS = [
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "aws.amazon.com/efa", "operator": "Exists", "effect": "NoSchedule"},
    {
        "key": "sagemaker.amazonaws.com/node-health-status",
        "operator": "Equal",
        "value": "Unschedulable",
        "effect": "NoSchedule",
    },
    {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
]


@dataclass(frozen=True)
class HyperPodDependenciesArgs:
    provider: k8s.Provider
    depends_on: list[pulumi.Resource]


class HyperPodDependencies(pulumi.ComponentResource):
    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        args: HyperPodDependenciesArgs,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("hyperpod-dpd:infra:HyperPodDependencies", name, None, opts)
        pin = HYPERPOD_DEPENDENCIES_CHART
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name="dependencies",  # the release name the AWS docs use
            namespace=SYSTEM_NAMESPACE,
            # Project-relative, with its sub-charts vendored by `hyperpod-dpd fetch`: the same
            # input on every machine, and no preview downloads anything.
            chart=resolve_chart(pin),
            dependency_update=False,
            # No nodes exist yet: the DaemonSets and operators cannot become ready until the
            # HyperPod cluster that needs this release has been created.
            skip_await=True,
            values={
                "aws-efa-k8s-device-plugin": {"tolerations": EFA_PLUGIN_TOLERATIONS},
            },
            description=f"HyperPod dependencies from {pin.repo}@{pin.commit}/{pin.path}",
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=args.depends_on
            ),
        )
        self.register_outputs({"status": self.release.status})
