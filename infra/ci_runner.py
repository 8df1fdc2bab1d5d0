"""The CodeBuild runner of the stack's deploy jobs, inside its VPC, registered from its spec
(specs/ci/runner.py says what it may do and why it holds no deploy credential)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.vocabulary import CI_RUNNER
from infra.iam import inline_policy
from program.outputs import Outputs
from program.security_group_rules import create_rules
from specs.ci.runner import CiRunnerSpec


@dataclass(frozen=True)
class CiRunnerArgs:
    spec: CiRunnerSpec
    outputs: Outputs  # resolves the VPC, the private subnets and the cluster security group
    # The whole network (NAT and routes included): a runner that starts before its way out
    # exists cannot reach GitHub, and the first deploy's targeted phase must bring both
    # (hyperpod-dpd ci-runner --bootstrap).
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)


class CiRunner(pulumi.ComponentResource):
    project: aws.codebuild.Project

    def __init__(self, name: str, args: CiRunnerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(CI_RUNNER, name, None, opts)
        out, spec = args.outputs, args.spec
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        group = aws.ec2.SecurityGroup(
            spec.security_group.name, **out.resolve(spec.security_group.kwargs()), opts=child
        )
        out.publish(spec.security_group.name, id=group.id)
        create_rules(spec.rules, out, child)
        key = aws.kms.Key(spec.log_key.name, **out.resolve(spec.log_key.kwargs()), opts=child)
        out.publish(spec.log_key.name, arn=key.arn)
        logs = aws.cloudwatch.LogGroup(
            spec.log_group.name, **out.resolve(spec.log_group.kwargs()), opts=child
        )
        role = aws.iam.Role(spec.role.name, **out.resolve(spec.role.kwargs()), opts=child)
        out.publish(spec.role.name, id=role.id, arn=role.arn)
        policy = inline_policy(spec.policy, out, self)
        # CodeBuild checks at creation that its role may describe the VPC and reach the
        # connection: the grants first.
        self.project = aws.codebuild.Project(
            spec.project.name,
            **out.resolve(spec.project.kwargs()),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*args.depends_on, policy, logs, group]
            ),
        )
        out.publish(spec.project.name, name=self.project.name)
        aws.codebuild.Webhook(spec.webhook.name, **out.resolve(spec.webhook.kwargs()), opts=child)
        self.register_outputs({"projectName": self.project.name})
