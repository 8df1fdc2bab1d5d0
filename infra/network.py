"""VPC for a HyperPod EKS cluster: one GPU subnet in the capacity AZ, private and public subnets.

All GPU capacity (prefill and decode groups) must sit in one Availability Zone for EFA RDMA, so
the GPU subnet is a single subnet in `availabilityZoneId` (the AWS DPD guide: all nodes in one
AZ; terraform-aws-modules/terraform-aws-eks #3044 for placement groups across AZs). The
EKS control plane needs subnets in two or more AZs: those are the private subnets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from core.vocabulary import NETWORK
from infra.iam import inline_policy, service_trust
from program.outputs import Outputs
from specs.base import Desired
from specs.desired import ACCOUNT_ID
from specs.log_keys import log_group_key
from specs.network import SubnetSpec


@dataclass(frozen=True)
class NetworkArgs:
    vpc_cidr: str
    gpu_az_id: str
    subnets: tuple[SubnetSpec, ...]  # specs/network.py: one per tier and AZ, keyed by AZ ID
    outputs: Outputs  # publishes the VPC's and subnets' ids and `privateSubnetIds`
    nat_gateways: str = "single"  # "single" | "perAz"
    region: str = "us-east-2"
    tags: dict[str, str] = field(default_factory=dict)
    # VPC flow logs (network.flowLogs): to a KMS-encrypted CloudWatch log group kept this many
    # days; None: none. `account_id` (an output) scopes the key and the delivery role.
    flow_log_retention_days: int | None = None
    account_id: pulumi.Input[str] = ""
    partition: str = "aws"
    log_group_name: str = "/hyperpod-dpd/vpc-flow-logs"
    flow_logs_policy: Desired | None = None  # specs/network.py: the delivery role's policy


class Network(pulumi.ComponentResource):
    """VPC, subnets, internet and NAT gateways, route tables and an S3 gateway endpoint."""

    vpc_id: pulumi.Output[str]
    gpu_subnet_id: pulumi.Output[str]
    private_subnet_ids: pulumi.Output[list[str]]
    public_subnet_ids: pulumi.Output[list[str]]

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(NETWORK, name, None, opts)
        self._name, self._args = name, args
        self._plans = [s.plan for s in args.subnets]

        self.vpc = self._create_vpc()
        args.outputs.publish(f"{name}-vpc", id=self.vpc.id, arn=self.vpc.arn)
        self.subnets = {s.plan.key: self._create_subnet(s) for s in args.subnets}
        self._create_public_routing()
        self.private_route_tables = self._create_private_routing()
        self.s3_endpoint = self._create_s3_endpoint()
        if args.flow_log_retention_days is not None and args.flow_logs_policy is not None:
            self._create_flow_logs(args.flow_log_retention_days)

        self.vpc_id = self.vpc.id
        self.gpu_subnet_id = self.subnets[f"gpu-{args.gpu_az_id}"].id
        self.private_subnet_ids = pulumi.Output.all(*self._ids("private"))
        self.public_subnet_ids = pulumi.Output.all(*self._ids("public"))
        args.outputs.publish(name, privateSubnetIds=self.private_subnet_ids)
        self.register_outputs(
            {
                "vpcId": self.vpc_id,
                "gpuSubnetId": self.gpu_subnet_id,
                "gpuAvailabilityZoneId": args.gpu_az_id,
                "privateSubnetIds": self.private_subnet_ids,
                "publicSubnetIds": self.public_subnet_ids,
                "s3EndpointId": self.s3_endpoint.id,
            }
        )

    def _opts(self, **kwargs) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **kwargs)

    def _tags(self, suffix: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**self._args.tags, "Name": f"{self._name}-{suffix}", **(extra or {})}

    def _ids(self, tier: str) -> list[pulumi.Output[str]]:
        return [self.subnets[p.key].id for p in self._plans if p.tier == tier]

    def _create_vpc(self) -> aws.ec2.Vpc:
        vpc = aws.ec2.Vpc(
            f"{self._name}-vpc",
            cidr_block=self._args.vpc_cidr,
            # EKS private endpoint access and VPC endpoints resolve through VPC DNS.
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags=self._tags("vpc"),
            opts=self._opts(),
        )
        # Adopt the default security group and leave it without rules, so nothing that
        # falls back to it is reachable (CIS AWS 5.4).
        aws.ec2.DefaultSecurityGroup(
            f"{self._name}-default-sg",
            vpc_id=vpc.id,
            ingress=[],
            egress=[],
            tags=self._tags("default-sg-locked"),
            opts=self._opts(),
        )
        return vpc

    def _create_subnet(self, spec: SubnetSpec) -> aws.ec2.Subnet:
        d = spec.resource
        subnet = aws.ec2.Subnet(d.name, **self._args.outputs.resolve(d.kwargs()), opts=self._opts())
        self._args.outputs.publish(d.name, id=subnet.id)
        return subnet

    def _create_public_routing(self) -> None:
        igw = aws.ec2.InternetGateway(
            f"{self._name}-igw", vpc_id=self.vpc.id, tags=self._tags("igw"), opts=self._opts()
        )
        table = aws.ec2.RouteTable(
            f"{self._name}-public-rt",
            vpc_id=self.vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags=self._tags("public-rt"),
            opts=self._opts(),
        )
        for plan in self._plans:
            if plan.tier == "public":
                aws.ec2.RouteTableAssociation(
                    f"{self._name}-{plan.key}-rta",
                    subnet_id=self.subnets[plan.key].id,
                    route_table_id=table.id,
                    opts=self._opts(),
                )

    def _nat_azs(self) -> list[str]:
        if self._args.nat_gateways == "perAz":
            return sorted({p.az_id for p in self._plans if p.tier != "public"})
        # One NAT gateway, in the GPU AZ: the GPU nodes pull the large images and reach the
        # Hub, so their traffic never crosses an AZ boundary (no inter-AZ data charges).
        return [self._args.gpu_az_id]

    def _create_private_routing(self) -> dict[str, aws.ec2.RouteTable]:
        tables = {}
        for az in self._nat_azs():
            eip = aws.ec2.Eip(
                f"{self._name}-nat-eip-{az}",
                domain="vpc",
                tags=self._tags(f"nat-eip-{az}"),
                opts=self._opts(),
            )
            nat = aws.ec2.NatGateway(
                f"{self._name}-nat-{az}",
                allocation_id=eip.id,
                subnet_id=self.subnets[f"public-{az}"].id,
                tags=self._tags(f"nat-{az}"),
                opts=self._opts(),
            )
            tables[az] = aws.ec2.RouteTable(
                f"{self._name}-private-rt-{az}",
                vpc_id=self.vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags=self._tags(f"private-rt-{az}"),
                opts=self._opts(),
            )
        for plan in self._plans:
            if plan.tier != "public":
                table = tables.get(plan.az_id) or tables[self._args.gpu_az_id]
                aws.ec2.RouteTableAssociation(
                    f"{self._name}-{plan.key}-rta",
                    subnet_id=self.subnets[plan.key].id,
                    route_table_id=table.id,
                    opts=self._opts(),
                )
        return tables

    def _create_s3_endpoint(self) -> aws.ec2.VpcEndpoint:
        # Model weights (~140 GB for a 70B model) load from S3: a gateway endpoint keeps that
        # traffic off the NAT gateway (no per-GB NAT charge) and inside the Region.
        return aws.ec2.VpcEndpoint(
            f"{self._name}-s3",
            vpc_id=self.vpc.id,
            service_name=f"com.amazonaws.{self._args.region}.s3",
            vpc_endpoint_type="Gateway",
            route_table_ids=[t.id for t in self.private_route_tables.values()],
            tags=self._tags("s3-endpoint"),
            opts=self._opts(),
        )

    def _create_flow_logs(self, days: int) -> None:
        """Flow logs of the whole VPC (accepted and rejected) to a CloudWatch log group encrypted
        with a key of its own. The key policy lets the account administer the key and CloudWatch
        Logs of this Region use it for this log group only ("Encrypt log data in CloudWatch Logs
        using AWS KMS", https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html);
        VPC Flow Logs delivers with a role it may assume for this account's flow logs only
        ("Publish flow logs to CloudWatch Logs",
        https://docs.aws.amazon.com/vpc/latest/userguide/flow-logs-iam-role.html)."""
        a, name = self._args, self._name
        account, part, region = a.account_id, a.partition, a.region
        key_spec = log_group_key(
            f"{name}-flow-logs-key",
            (NETWORK,),
            f"arn:{part}:logs:{region}:{ACCOUNT_ID}:log-group:{a.log_group_name}",
            account_id=ACCOUNT_ID,
            partition=part,
            region=region,
            description=f"VPC flow logs of {name} ({a.log_group_name})",
            tags=self._tags("flow-logs-key"),
        )
        key = aws.kms.Key(key_spec.name, **a.outputs.resolve(key_spec.kwargs()), opts=self._opts())
        group = aws.cloudwatch.LogGroup(
            f"{name}-flow-logs",
            name=a.log_group_name,
            retention_in_days=days,
            kms_key_id=key.arn,
            tags=self._tags("flow-logs"),
            opts=self._opts(),
        )
        trust = service_trust(
            "vpc-flow-logs.amazonaws.com",
            source_account=account,
            source_arn=pulumi.Output.concat(
                f"arn:{part}:ec2:{region}:", account, ":vpc-flow-log/*"
            ),
        )
        role = aws.iam.Role(
            f"{name}-flow-logs-role", assume_role_policy=trust, tags=self._args.tags,
            opts=self._opts(),
        )  # fmt: skip
        a.outputs.publish(f"{name}-flow-logs-role", id=role.id)
        assert a.flow_logs_policy is not None, "flow logs need their delivery role's policy"
        grant = inline_policy(a.flow_logs_policy, a.outputs, self)
        aws.ec2.FlowLog(
            f"{name}-flow-log",
            vpc_id=self.vpc.id,
            traffic_type="ALL",
            log_destination_type="cloud-watch-logs",
            log_destination=group.arn,
            iam_role_arn=role.arn,
            max_aggregation_interval=60,
            tags=self._tags("flow-log"),
            opts=self._opts(depends_on=[grant]),
        )
