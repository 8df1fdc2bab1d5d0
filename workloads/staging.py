"""Staging the checkpoint into the model bucket as part of `pulumi up`: an in-cluster Job,
registered from its spec (specs/staging.py says what it runs and why), with the IRSA role and
service account it runs as.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from core.vocabulary import CHECKPOINT_STAGING
from program.outputs import Outputs
from specs.staging import NAMESPACE, SERVICE_ACCOUNT, StagingSpec
from workloads.service_account import AwsServiceAccount, ClusterAccess, aws_service_account


@dataclass(frozen=True)
class StagingArgs:
    spec: StagingSpec
    outputs: Outputs  # resolves the model bucket and the Hugging Face token
    cluster: ClusterAccess
    tags: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the system nodes


class CheckpointStaging(pulumi.ComponentResource):
    job: k8s.batch.v1.Job

    def __init__(self, name: str, args: StagingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(CHECKPOINT_STAGING, name, None, opts)
        spec, out = args.spec, args.outputs
        self.prefix = spec.prefix
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=args.cluster.provider)

        def after(*resources: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions.merge(
                k8s_opts, pulumi.ResourceOptions(depends_on=list(resources))
            )

        namespace = k8s.core.v1.Namespace(
            spec.namespace.name, **out.resolve(spec.namespace.kwargs()), opts=k8s_opts
        )
        account, self.policy = aws_service_account(
            name,
            AwsServiceAccount(NAMESPACE, SERVICE_ACCOUNT, spec.policy, args.tags),
            args.cluster,
            out,
            self,
            depends_on=[namespace],
        )
        code = k8s.core.v1.ConfigMap(
            spec.code.name, **out.resolve(spec.code.kwargs()), opts=after(namespace)
        )
        needs = [account, code]
        if spec.metadata_policy is not None:  # the pod never runs before it is in place
            needs.append(
                k8s.networking.v1.NetworkPolicy(
                    spec.metadata_policy.name,
                    **out.resolve(spec.metadata_policy.kwargs()),
                    opts=after(namespace),
                )
            )
        if spec.token is not None:
            needs.append(
                k8s.core.v1.Secret(
                    spec.token.name, **out.resolve(spec.token.kwargs()), opts=after(namespace)
                )
            )
        # One Job per staged copy (the stack's checkpoint's first); a copy's objects stay in
        # the bucket when its Job goes (a Job never deletes what it staged).
        self.jobs = [
            k8s.batch.v1.Job(
                job.name,
                **out.resolve(job.kwargs()),
                opts=pulumi.ResourceOptions.merge(
                    after(*needs, *args.depends_on, self.policy),
                    pulumi.ResourceOptions(
                        # ~140 GB for a 70B model; Pulumi waits for the Job to succeed.
                        custom_timeouts=pulumi.CustomTimeouts(create="4h", update="4h"),
                    ),
                ),
            )
            for job in spec.jobs
        ]
        self.job = self.jobs[0]
        self.job_of = dict(zip(spec.prefixes, self.jobs, strict=True))  # by staged prefix
        self.register_outputs({"prefix": self.prefix, "job": self.job.metadata["name"]})
