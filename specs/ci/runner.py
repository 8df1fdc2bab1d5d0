"""The CodeBuild project GitHub Actions runs the stack's deploy jobs on, inside its VPC
(hyperpod-dpd:ci.runner codebuild; settings/ci.py says why a private EKS API needs one).

What it is (CodeBuild user guide, "Tutorial: Configure a CodeBuild-hosted GitHub Actions runner",
https://docs.aws.amazon.com/codebuild/latest/userguide/action-runner.html): a project whose
source is the repository (through a CodeConnections connection) and whose webhook builds on
GitHub's `workflow_job` queued event; a job whose `runs-on` is
`codebuild-<project>-${{ github.run_id }}-${{ github.run_attempt }}` runs in a fresh container
of the project, here in the stack's private subnets.

What it holds, on purpose, is no credential:
- its service role (the container's credentials) may write its own log group, create and
  describe the network interfaces CodeBuild needs in the VPC ("Allow CodeBuild to access AWS
  services required to create a VPC network interface",
  https://docs.aws.amazon.com/codebuild/latest/userguide/auth-and-access-control-iam-identity-based-access-control.html)
  and use the one connection; every deploy credential comes from the job's own GitHub OIDC
  token, which AWS and Pulumi Cloud trust only in the stack's protected environment
  (ci/aws-github-oidc.yaml). The EKS API answers IAM identities only.
- its security group lets it out on 443 (GitHub, the AWS APIs, Pulumi Cloud, PyPI, through the
  NAT) and into the EKS cluster security group on 443 (the API server), nothing in.

What it does hold is network reach inside the stack's VPC, and a job of any workflow that names
this runner gets it. So the webhook takes the jobs of the stack's own workflows only
(`runner_workflows`): `deploy` always, `pull-request` only where pull requests preview the
stack (ci.pullRequestPreview: dev, never prod) and `rollout` only where the stack has a traffic
split to move (hyperpod-dpd:traffic). A narrower filter is not a boundary either: a branch can
add a workflow named `deploy`, and the runner's label is predictable; what such a job can reach
is what the VPC lets it reach. Its egress cannot be narrowed to "the internet but not the VPC":
a security group rule only allows, and GitHub's and AWS's addresses are the internet's, so
443 to 0.0.0.0/0 holds the VPC's own addresses too. Inside the VPC on 443 it finds the API
server (IAM only), the traffic split (its group admits the HyperPod nodes and the listener's
named clients, not this runner, and asks for the API key), the nodes (their group admits
neither the runner nor the rest of the VPC, specs/nodes.py) and the inference operator's own
load balancer, which forwards to the router without a key: `hyperpod-dpd verify` checks it
(docs/troubleshooting.md#operator-load-balancer-answers-without-a-key). GitHub recommends
self-hosted runners for private repositories only: a fork's pull request runs its code on
them ("Adding self-hosted runners",
https://docs.github.com/en/actions/how-tos/managing-self-hosted-runners/adding-self-hosted-runners);
keep a repository with this runner private.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.versions import CODEBUILD_RUNNER_IMAGE
from core.vocabulary import (
    CI_RUNNER,
    ROLE_POLICY_TYPE,
    SECURITY_GROUP_TYPE,
    SG_EGRESS_TYPE,
    SG_INGRESS_TYPE,
    ci_runner_project,
)
from specs.base import Desired
from specs.iam import allow, document_text, service_statement, source_scoped
from specs.log_keys import log_group_key

PROJECT_TYPE = "aws:codebuild/project:Project"
WEBHOOK_TYPE = "aws:codebuild/webhook:Webhook"
ROLE_TYPE = "aws:iam/role:Role"
LOG_GROUP_TYPE = "aws:cloudwatch/logGroup:LogGroup"
HTTPS = 443
# The project's workflows whose jobs a runner may take (their `name:`, .github/workflows): the
# deploy, the pull requests' preview and the traffic rollout; each stack's runner takes the ones
# that concern it (runner_workflows).
DEPLOY, PULL_REQUEST, ROLLOUT = "deploy", "pull-request", "rollout"
WORKFLOWS = (DEPLOY, PULL_REQUEST, ROLLOUT)
# A deploy creates the HyperPod cluster (30-60 min of deep health checks) and the operator
# add-on (up to 40): the build may last as long as GitHub lets a job run (6 hours).
BUILD_TIMEOUT_MINUTES = 360
# What CodeBuild does with the connection: read it and get a token for the repository.
CONNECTION_ACTIONS = ("GetConnection", "GetConnectionToken", "UseConnection")
LOG_RETENTION_DAYS = 90


@dataclass(frozen=True)
class CiRunnerSpec:
    name: str
    project_name: str
    security_group: Desired
    rules: tuple[Desired, ...]
    log_key: Desired
    log_group: Desired
    role: Desired
    policy: Desired
    project: Desired
    webhook: Desired

    def resources(self) -> list[Desired]:
        return [
            self.security_group,
            *self.rules,
            self.log_key,
            self.log_group,
            self.role,
            self.policy,
            self.project,
            self.webhook,
        ]


def runner_workflows(pull_request_preview: bool, traffic: bool) -> tuple[str, ...]:
    """The workflows a stack's runner takes jobs from: its deploys; the pull requests' preview
    only with ci.pullRequestPreview; the rollout only with a traffic split to move."""
    return (
        DEPLOY,
        *((PULL_REQUEST,) if pull_request_preview else ()),
        *((ROLLOUT,) if traffic else ()),
    )


def ci_runner(
    name: str,
    stack: str,
    *,
    repository: str,
    connection_arn: str,
    compute_type: str,
    vpc_id: str,
    private_subnet_ids: list[str],
    cluster_security_group_id: str,
    region: str,
    account_id: str,
    partition: str,
    tags: dict[str, str],
    workflows: tuple[str, ...] = (DEPLOY,),
) -> CiRunnerSpec:
    """The runner `{name}-*` of `stack`, taking the jobs of `workflows` (runner_workflows);
    the ids and the account are placeholders."""
    project_name = ci_runner_project(stack)
    parents = (CI_RUNNER,)
    group = Desired(
        SECURITY_GROUP_TYPE,
        f"{name}-sg",
        parents,
        {
            "vpcId": vpc_id,
            "description": "CI runner (CodeBuild): out on 443, into the EKS API on 443",
            "tags": {**tags, "Name": f"{name}-sg"},
        },
    )
    own = ref(group.name, "id")
    tcp = {"ipProtocol": "tcp", "fromPort": HTTPS, "toPort": HTTPS}
    rules = (
        Desired(
            SG_EGRESS_TYPE,
            f"{name}-egress-https",
            parents,
            {
                **tcp,
                "securityGroupId": own,
                "cidrIpv4": "0.0.0.0/0",
                "description": "GitHub, AWS APIs, Pulumi Cloud, PyPI (through the NAT)",
            },
        ),
        Desired(
            SG_INGRESS_TYPE,
            f"{name}-to-eks-api",
            parents,
            {
                **tcp,
                "securityGroupId": cluster_security_group_id,
                "referencedSecurityGroupId": own,
                "description": "The CI runner reaches the private EKS API server",
            },
        ),
    )
    # The deploys' logs (a plan, resource ids; Pulumi masks secrets) under a key of their own.
    log_group_name = f"/aws/codebuild/{project_name}"
    log_arn = f"arn:{partition}:logs:{region}:{account_id}:log-group:{log_group_name}"
    log_key = log_group_key(
        f"{name}-logs-key",
        parents,
        log_arn,
        account_id=account_id,
        partition=partition,
        region=region,
        description=f"Logs of the CI runner of {stack} ({log_group_name})",
        tags=tags,
    )
    log_group = Desired(
        LOG_GROUP_TYPE,
        f"{name}-logs",
        parents,
        {
            "name": log_group_name,
            "retentionInDays": LOG_RETENTION_DAYS,
            "kmsKeyId": ref(log_key.name, "arn"),
            "tags": tags,
        },
    )
    project_arn = f"arn:{partition}:codebuild:{region}:{account_id}:project/{project_name}"
    role = Desired(
        ROLE_TYPE,
        f"{name}-role",
        parents,
        {
            # Confused deputy: only this account's project of this name (CodeBuild user guide,
            # "Cross-service confused deputy prevention").
            "assumeRolePolicy": document_text(
                source_scoped(service_statement("codebuild.amazonaws.com"), account_id, project_arn)
            ),
            "description": f"CodeBuild runner of {stack}: logs, VPC interfaces, the connection",
            "tags": tags,
        },
        autoname="name",
    )
    service = connection_arn.split(":")[2]  # codeconnections or codestar-connections
    ec2 = f"arn:{partition}:ec2:{region}:{account_id}"
    subnet_arns = [f"{ec2}:subnet/{subnet}" for subnet in private_subnet_ids]
    policy = Desired(
        ROLE_POLICY_TYPE,
        f"{name}-policy",
        parents,
        {
            "role": ref(role.name, "id"),
            "policy": document_text(
                allow(["logs:CreateLogStream", "logs:PutLogEvents"], [f"{log_arn}:*"], "Logs"),
                # The describes have no resource type (IAM matches them against "*" only).
                allow(
                    [
                        "ec2:DescribeDhcpOptions",
                        "ec2:DescribeNetworkInterfaces",
                        "ec2:DescribeSecurityGroups",
                        "ec2:DescribeSubnets",
                        "ec2:DescribeVpcs",
                    ],
                    ["*"],
                    "DescribeVpc",
                ),
                # CodeBuild documents these two on "*"; IAM scopes them by resource: an
                # interface in the runner's subnets with its group, deleted there only.
                allow(
                    ["ec2:CreateNetworkInterface"],
                    [*subnet_arns, f"{ec2}:security-group/{own}", f"{ec2}:network-interface/*"],
                    "CreateInterfaces",
                ),
                {
                    **allow(
                        ["ec2:DeleteNetworkInterface"],
                        [f"{ec2}:network-interface/*"],
                        "DeleteInterfaces",
                    ),
                    "Condition": {"ArnEquals": {"ec2:Subnet": subnet_arns}},
                },
                {
                    **allow(
                        ["ec2:CreateNetworkInterfacePermission"],
                        [f"{ec2}:network-interface/*"],
                        "VpcInterfacePermission",
                    ),
                    "Condition": {
                        "StringEquals": {"ec2:AuthorizedService": "codebuild.amazonaws.com"},
                        "ArnEquals": {"ec2:Subnet": subnet_arns},
                    },
                },
                # The connection's own service's actions: codeconnections for a
                # codeconnections ARN, codestar-connections for one made before the rename
                # (CodeBuild user guide, "GitHub App connections"; IAM's actions take only
                # their own service's ARNs).
                allow(
                    [f"{service}:{action}" for action in CONNECTION_ACTIONS],
                    [connection_arn],
                    "Connection",
                ),
            ),
        },
    )
    project = Desired(
        PROJECT_TYPE,
        f"{name}-project",
        parents,
        {
            "name": project_name,
            "description": f"GitHub Actions runner of the {stack} stack, in its VPC",
            "serviceRole": ref(role.name, "arn"),
            "buildTimeout": BUILD_TIMEOUT_MINUTES,
            "artifacts": {"type": "NO_ARTIFACTS"},
            "environment": {
                "type": "LINUX_CONTAINER",
                "computeType": compute_type,
                "image": CODEBUILD_RUNNER_IMAGE,
                "imagePullCredentialsType": "CODEBUILD",
                "privilegedMode": False,
            },
            "source": {
                "type": "GITHUB",
                "location": f"https://github.com/{repository}.git",
                "gitCloneDepth": 1,
                "auth": {"type": "CODECONNECTIONS", "resource": connection_arn},
            },
            "vpcConfig": {
                "vpcId": vpc_id,
                "subnets": list(private_subnet_ids),
                "securityGroupIds": [own],
            },
            "logsConfig": {"cloudwatchLogs": {"status": "ENABLED", "groupName": log_group_name}},
            "tags": tags,
        },
    )
    webhook = Desired(
        WEBHOOK_TYPE,
        f"{name}-webhook",
        parents,
        {
            "projectName": ref(project.name, "name"),
            "buildType": "BUILD",
            "filterGroups": [
                {
                    "filters": [
                        {"type": "EVENT", "pattern": "WORKFLOW_JOB_QUEUED"},
                        {"type": "WORKFLOW_NAME", "pattern": f"^({'|'.join(workflows)})$"},
                    ]
                }
            ],
        },
    )
    return CiRunnerSpec(
        name, project_name, group, rules, log_key, log_group, role, policy, project, webhook
    )
