"""Each AWS resource type the program can register, as CloudFormation declares it: the one place
that says which CloudFormation type judges a Pulumi type's inputs, and how the inputs translate.

pulumi-aws is generated from the Terraform provider, whose inputs are the AWS API's in camelCase;
aws-native is generated from the CloudFormation registry schemas themselves. An input goes, by
default, to the CloudFormation property of its own name (case aside, at any depth: check.py
follows the schema); `inputs` says where a top-level input goes instead, `renames` names keys at
any depth whose CloudFormation name differs, `provider_only` lists what the provider keeps to
itself (with why), `aws_supplies` the required properties another resource or AWS provides. A Pulumi type that is a part of a
CloudFormation type (an S3 bucket's versioning) maps to that parent type, with the inputs under
the parent's property. A type CloudFormation cannot declare is EXEMPT, with its reason.

A resource type the program registers that is neither here nor in EXEMPT fails the tests
(tests/infra/test_cfn_schema.py): add it here, mapped, before it ships.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class To:
    """Where one Pulumi input goes: a dotted property path in the CloudFormation resource ("" to
    merge the converted value's properties into it), with the value's shape changed by `convert`
    where CloudFormation shapes it otherwise; `resource`: the input belongs to a CloudFormation
    resource of another type (an internet gateway's VPC is a VPCGatewayAttachment's), judged as
    one of its own (`each`: one per item of a list)."""

    path: str
    convert: Callable[[Any], Any] | None = None
    resource: str | None = None
    each: bool = False


@dataclass(frozen=True)
class Mapped:
    cfn: str
    inputs: Mapping[str, str | To] = field(default_factory=dict)
    renames: Mapping[str, str] = field(default_factory=dict)
    provider_only: Mapping[str, str] = field(default_factory=dict)
    aws_supplies: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Exempt:
    reason: str


def _policy(text: str) -> Any:
    """An IAM policy: JSON text on the wire, an object in a template (so cfn-lint reads it)."""
    return json.loads(text)


def _workspace_arn(workspace_id: Any) -> str:
    return f"arn:aws:aps:us-east-1:111122223333:workspace/{workspace_id}"


def _one_attribute(key: str) -> Callable[[Any], list[dict[str, str]]]:
    """A boolean input that is one load balancer attribute (`Key`/`Value`, the value as text)."""
    return lambda value: [{"Key": key, "Value": json.dumps(value)}]


# A listener's (or rule's) action: Pulumi names each action's configuration after its type.
_ACTION_RENAMES = {
    "forward": "ForwardConfig",
    "arn": "TargetGroupArn",
    "fixedResponse": "FixedResponseConfig",
}
# aws:lb/listenerRule conditions: Pulumi's {kind: config} -> CloudFormation's Field and its config.
_CONDITION_FIELDS = {
    "hostHeader": ("host-header", "HostHeaderConfig"),
    "httpHeader": ("http-header", "HttpHeaderConfig"),
    "httpRequestMethod": ("http-request-method", "HttpRequestMethodConfig"),
    "pathPattern": ("path-pattern", "PathPatternConfig"),
    "queryString": ("query-string", "QueryStringConfig"),
    "sourceIp": ("source-ip", "SourceIpConfig"),
}


def _rule_conditions(conditions: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for condition in conditions:
        for kind, config in condition.items():
            field_name, config_name = _CONDITION_FIELDS[kind]
            out.append({"Field": field_name, config_name: config})
    return out


def _alias_target(aliases: list[Mapping[str, Any]]) -> dict[str, Any]:
    """aws:route53/record aliases (at most one) -> the record set's AliasTarget."""
    (alias,) = aliases
    names = {"name": "DNSName", "zoneId": "HostedZoneId"}
    return {names.get(k, k): v for k, v in alias.items()}


# aws:lb/targetGroup healthCheck -> the target group's own HealthCheck* properties.
_HEALTH_CHECK = {
    "enabled": "HealthCheckEnabled",
    "interval": "HealthCheckIntervalSeconds",
    "path": "HealthCheckPath",
    "port": "HealthCheckPort",
    "protocol": "HealthCheckProtocol",
    "timeout": "HealthCheckTimeoutSeconds",
    "healthyThreshold": "HealthyThresholdCount",
    "unhealthyThreshold": "UnhealthyThresholdCount",
}


def _health_check(check: Mapping[str, Any]) -> dict[str, Any]:
    out = {_HEALTH_CHECK.get(k, f"healthCheck.{k}"): v for k, v in check.items() if k != "matcher"}
    if "matcher" in check:
        out["Matcher"] = {"HttpCode": check["matcher"]}
    return out


_SG_RULE = {"securityGroupId": "GroupId", "cidrIpv4": "CidrIp"}


def _access_logs(logs: Mapping[str, Any]) -> list[dict[str, str]]:
    """aws:lb/loadBalancer accessLogs -> the load balancer's access_logs.s3.* attributes."""
    return [
        {"Key": f"access_logs.s3.{k}", "Value": v if isinstance(v, str) else json.dumps(v)}
        for k, v in logs.items()
    ]


def _lifecycle_rules(rules: list[Mapping[str, Any]]) -> dict[str, Any]:
    """aws:s3/bucketLifecycleConfiguration rules -> the bucket's LifecycleConfiguration (Prefix
    instead of Filter, ExpirationInDays instead of expiration.days)."""
    out = []
    for r in rules:
        rule: dict[str, Any] = {"Id": r["id"], "Status": r["status"]}
        if "filter" in r:
            rule["Prefix"] = r["filter"].get("prefix", "")
        if "expiration" in r:
            rule["ExpirationInDays"] = r["expiration"]["days"]
        if "noncurrentVersionExpiration" in r:
            rule["NoncurrentVersionExpiration"] = {
                "NoncurrentDays": r["noncurrentVersionExpiration"]["noncurrentDays"]
            }
        if "abortIncompleteMultipartUpload" in r:
            rule["AbortIncompleteMultipartUpload"] = {
                "DaysAfterInitiation": r["abortIncompleteMultipartUpload"]["daysAfterInitiation"]
            }
        out.append(rule)
    return {"Rules": out}


MAPPED: dict[str, Mapped] = {
    # --- aws-native: the CloudFormation type itself ------------------------------------------
    "aws-native:sagemaker:Cluster": Mapped("AWS::SageMaker::Cluster"),
    # --- EC2 and VPC -------------------------------------------------------------------------
    "aws:ec2/vpc:Vpc": Mapped("AWS::EC2::VPC"),
    "aws:ec2/subnet:Subnet": Mapped("AWS::EC2::Subnet"),
    "aws:ec2/internetGateway:InternetGateway": Mapped(
        "AWS::EC2::InternetGateway",
        # AttachInternetGateway: CloudFormation declares the attachment on its own.
        inputs={"vpcId": To("VpcId", resource="AWS::EC2::VPCGatewayAttachment")},
    ),
    "aws:ec2/eip:Eip": Mapped("AWS::EC2::EIP"),
    "aws:ec2/natGateway:NatGateway": Mapped("AWS::EC2::NatGateway"),
    "aws:ec2/routeTable:RouteTable": Mapped(
        "AWS::EC2::RouteTable",
        # Inline routes are CreateRoute calls: each an AWS::EC2::Route of its own.
        inputs={"routes": To("", resource="AWS::EC2::Route", each=True)},
        renames={"cidrBlock": "DestinationCidrBlock"},
    ),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": Mapped(
        "AWS::EC2::SubnetRouteTableAssociation"
    ),
    "aws:ec2/vpcEndpoint:VpcEndpoint": Mapped("AWS::EC2::VPCEndpoint"),
    "aws:ec2/placementGroup:PlacementGroup": Mapped(
        "AWS::EC2::PlacementGroup",
        # Pulumi's auto-name, CreatePlacementGroup's GroupName (read-only in CloudFormation,
        # which names the group itself: rules.py holds EC2's rule for it).
        inputs={"name": "GroupName"},
    ),
    "aws:ec2/securityGroup:SecurityGroup": Mapped(
        "AWS::EC2::SecurityGroup",
        inputs={"description": "GroupDescription", "name": "GroupName"},
    ),
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": Mapped(
        # The group EC2 makes with every VPC, adopted: the program empties its rules and tags
        # it. Its description is EC2's own ("default VPC security group").
        "AWS::EC2::SecurityGroup",
        inputs={"ingress": "SecurityGroupIngress", "egress": "SecurityGroupEgress"},
        aws_supplies={"GroupDescription": "EC2, when it creates the VPC"},
    ),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": Mapped(
        "AWS::EC2::SecurityGroupIngress",
        inputs={**_SG_RULE, "referencedSecurityGroupId": "SourceSecurityGroupId"},
    ),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": Mapped(
        "AWS::EC2::SecurityGroupEgress",
        inputs={**_SG_RULE, "referencedSecurityGroupId": "DestinationSecurityGroupId"},
    ),
    # --- Elastic Load Balancing ----------------------------------------------------------------
    "aws:lb/loadBalancer:LoadBalancer": Mapped(
        "AWS::ElasticLoadBalancingV2::LoadBalancer",
        inputs={
            "loadBalancerType": "Type",
            "internal": To(
                "Scheme", lambda internal: "internal" if internal else "internet-facing"
            ),
            "dropInvalidHeaderFields": To(
                "LoadBalancerAttributes",
                _one_attribute("routing.http.drop_invalid_header_fields.enabled"),
            ),
            "idleTimeout": To(
                "LoadBalancerAttributes", _one_attribute("idle_timeout.timeout_seconds")
            ),
            "accessLogs": To("LoadBalancerAttributes", _access_logs),
        },
    ),
    "aws:lb/targetGroup:TargetGroup": Mapped(
        "AWS::ElasticLoadBalancingV2::TargetGroup", inputs={"healthCheck": To("", _health_check)}
    ),
    "aws:lb/listener:Listener": Mapped(
        "AWS::ElasticLoadBalancingV2::Listener",
        # The one server certificate: the first of the listener's Certificates.
        inputs={"certificateArn": "Certificates.0.CertificateArn"},
        renames=_ACTION_RENAMES,
    ),
    "aws:lb/listenerRule:ListenerRule": Mapped(
        "AWS::ElasticLoadBalancingV2::ListenerRule",
        inputs={"conditions": To("Conditions", _rule_conditions)},
        renames=_ACTION_RENAMES,
    ),
    # --- Route 53 --------------------------------------------------------------------------------
    "aws:route53/record:Record": Mapped(
        "AWS::Route53::RecordSet",
        inputs={"zoneId": "HostedZoneId", "aliases": To("AliasTarget", _alias_target)},
    ),
    # --- EKS -------------------------------------------------------------------------------------
    "aws:eks/cluster:Cluster": Mapped(
        "AWS::EKS::Cluster",
        inputs={
            "vpcConfig": "ResourcesVpcConfig",
            "enabledClusterLogTypes": To(
                "Logging.ClusterLogging.EnabledTypes", lambda types: [{"Type": t} for t in types]
            ),
            # One configuration in the EKS API's list of them.
            "encryptionConfig": To("EncryptionConfig", lambda config: [config]),
        },
    ),
    "aws:eks/accessEntry:AccessEntry": Mapped("AWS::EKS::AccessEntry"),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": Mapped(
        # AssociateAccessPolicy: one of the entry's AccessPolicies in CloudFormation.
        "AWS::EKS::AccessEntry",
        inputs={
            "policyArn": "AccessPolicies.0.PolicyArn",
            "accessScope": "AccessPolicies.0.AccessScope",
        },
    ),
    "aws:eks/addon:Addon": Mapped(
        "AWS::EKS::Addon",
        # CreateAddon and UpdateAddon take the same resolveConflicts, CloudFormation's one.
        inputs={
            "resolveConflictsOnCreate": "ResolveConflicts",
            "resolveConflictsOnUpdate": To("ResolveConflicts", resource="AWS::EKS::Addon"),
        },
    ),
    # --- IAM and KMS ---------------------------------------------------------------------------
    "aws:iam/role:Role": Mapped(
        "AWS::IAM::Role",
        inputs={
            "name": "RoleName",
            "assumeRolePolicy": To("AssumeRolePolicyDocument", _policy),
        },
        provider_only={"namePrefix": "the prefix Pulumi makes `name` from: IAM receives `name`"},
    ),
    "aws:iam/rolePolicy:RolePolicy": Mapped(
        "AWS::IAM::RolePolicy",
        inputs={"role": "RoleName", "name": "PolicyName", "policy": To("PolicyDocument", _policy)},
        aws_supplies={"PolicyName": "Pulumi's auto-name (the provider's, at create)"},
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": Mapped(
        # AttachRolePolicy: one of the role's ManagedPolicyArns in CloudFormation.
        "AWS::IAM::Role",
        inputs={"role": "RoleName", "policyArn": "ManagedPolicyArns.0"},
        aws_supplies={"AssumeRolePolicyDocument": "the role's own resource (aws:iam/role)"},
    ),
    "aws:iam/policy:Policy": Mapped(
        "AWS::IAM::ManagedPolicy",
        inputs={
            "name": "ManagedPolicyName",
            "policy": To("PolicyDocument", _policy),
            # CreatePolicy takes IAM tags; CloudFormation's ManagedPolicy has no Tags: judged as
            # a role's, the same IAM Tag type.
            "tags": To("Tags", resource="AWS::IAM::Role"),
        },
    ),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": Mapped(
        "AWS::IAM::OIDCProvider", inputs={"clientIdLists": "ClientIdList"}
    ),
    "aws:kms/key:Key": Mapped(
        "AWS::KMS::Key",
        inputs={
            "deletionWindowInDays": "PendingWindowInDays",
            "policy": To("KeyPolicy", _policy),
        },
    ),
    # --- CloudWatch Logs and VPC flow logs ------------------------------------------------------
    "aws:cloudwatch/logGroup:LogGroup": Mapped(
        "AWS::Logs::LogGroup", inputs={"name": "LogGroupName", "kmsKeyId": "KmsKeyId"}
    ),
    "aws:ec2/flowLog:FlowLog": Mapped(
        "AWS::EC2::FlowLog",
        # CreateFlowLogs takes VpcIds; CloudFormation one ResourceId and its ResourceType.
        inputs={
            "vpcId": "ResourceId",
            "iamRoleArn": "DeliverLogsPermissionArn",
            "maxAggregationInterval": "MaxAggregationInterval",
        },
        aws_supplies={"ResourceType": "VPC (the provider sends VpcIds)"},
    ),
    # --- CodeBuild: the deploy jobs' runner in the VPC (ci.runner codebuild) ------------------
    "aws:codebuild/project:Project": Mapped(
        "AWS::CodeBuild::Project",
        inputs={"buildTimeout": "TimeoutInMinutes"},
    ),
    "aws:codebuild/webhook:Webhook": Mapped(
        # CreateWebhook: the project's Triggers in CloudFormation (its FilterGroups a list of
        # lists of filters, where the API wraps each group's list in `filters`).
        "AWS::CodeBuild::Project",
        inputs={
            "projectName": "Name",
            "buildType": "Triggers.BuildType",
            "filterGroups": To(
                "Triggers.FilterGroups", lambda groups: [g["filters"] for g in groups]
            ),
        },
        aws_supplies={
            "Artifacts": "the project's own resource (aws:codebuild/project)",
            "Environment": "the project's own resource (aws:codebuild/project)",
            "ServiceRole": "the project's own resource (aws:codebuild/project)",
            "Source": "the project's own resource (aws:codebuild/project)",
        },
    ),
    # --- S3: the bucket, and its parts pulumi-aws registers as resources of their own ---------
    "aws:s3/bucket:Bucket": Mapped(
        "AWS::S3::Bucket",
        inputs={"bucket": "BucketName"},
        provider_only={
            "bucketPrefix": "the prefix Pulumi makes the bucket's name from (bucket: S3 gets it)",
            "forceDestroy": "the provider empties the bucket before DeleteBucket",
        },
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": Mapped(
        "AWS::S3::Bucket",
        inputs={
            "bucket": "BucketName",
            **{
                k: f"PublicAccessBlockConfiguration.{k[0].upper()}{k[1:]}"
                for k in (
                    "blockPublicAcls",
                    "blockPublicPolicy",
                    "ignorePublicAcls",
                    "restrictPublicBuckets",
                )
            },
        },
    ),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": Mapped(
        "AWS::S3::Bucket",
        inputs={"bucket": "BucketName", "rule": "OwnershipControls.Rules.0"},
    ),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        Mapped(
            "AWS::S3::Bucket",
            inputs={
                "bucket": "BucketName",
                "rules": "BucketEncryption.ServerSideEncryptionConfiguration",
            },
            renames={"applyServerSideEncryptionByDefault": "ServerSideEncryptionByDefault"},
        )
    ),
    "aws:s3/bucketVersioning:BucketVersioning": Mapped(
        "AWS::S3::Bucket", inputs={"bucket": "BucketName"}
    ),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": Mapped(
        "AWS::S3::Bucket",
        inputs={"bucket": "BucketName", "rules": To("LifecycleConfiguration", _lifecycle_rules)},
    ),
    "aws:s3/bucketPolicy:BucketPolicy": Mapped(
        "AWS::S3::BucketPolicy", inputs={"policy": To("PolicyDocument", _policy)}
    ),
    # --- Observability -------------------------------------------------------------------------
    "aws:amp/workspace:Workspace": Mapped("AWS::APS::Workspace"),
    "aws:grafana/workspace:Workspace": Mapped("AWS::Grafana::Workspace"),
    "aws:amp/ruleGroupNamespace:RuleGroupNamespace": Mapped(
        "AWS::APS::RuleGroupsNamespace",
        # CloudFormation names the workspace by its ARN, the API by its ID (the ARN's last part):
        # the ID judged inside an ARN of the schema's shape (Region and account do not matter).
        inputs={"workspaceId": To("Workspace", _workspace_arn)},
    ),
    # CloudFormation sets the alert manager definition as a property of the workspace.
    "aws:amp/alertManagerDefinition:AlertManagerDefinition": Mapped(
        "AWS::APS::Workspace",
        inputs={"definition": "AlertManagerDefinition"},
        provider_only={
            "workspaceId": "the workspace whose definition this is (in CloudFormation: its own)"
        },
    ),
    # --- Alerts: the SNS topic AMP's alert manager sends to ------------------------------------
    "aws:sns/topic:Topic": Mapped(
        "AWS::SNS::Topic",
        inputs={"name": "TopicName"},
    ),
    "aws:sns/topicPolicy:TopicPolicy": Mapped(
        "AWS::SNS::TopicPolicy",
        inputs={
            "arn": To("Topics", lambda arn: [arn]),
            "policy": To("PolicyDocument", _policy),
        },
    ),
    "aws:sns/topicSubscription:TopicSubscription": Mapped(
        "AWS::SNS::Subscription", inputs={"topic": "TopicArn"}
    ),
}

EXEMPT: dict[str, Exempt] = {
    "aws:route53/zoneAssociation:ZoneAssociation": Exempt(
        "associates the user's existing private zone (trafficListener.hostedZoneId) with the "
        "stack's VPC (Route 53 AssociateVPCWithHostedZone): CloudFormation declares a zone's VPCs "
        "only inside a zone it creates (AWS::Route53::HostedZone VPCs). Its two ids: the zone's "
        "by the settings' pattern and `hyperpod-dpd preflight` (GetHostedZone), the VPC the "
        "stack's own"
    ),
    "aws:s3/bucketObjectv2:BucketObjectv2": Exempt(
        "an S3 object (PutObject): CloudFormation declares no objects. The program uploads its "
        "lifecycle script under a key of its own (infra/lifecycle.py), no user text"
    ),
}
