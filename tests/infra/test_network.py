"""The Network component as the engine sees it, for the dev and prod stacks."""

from __future__ import annotations

import ipaddress

import pytest

from tests.conftest import edit, run_stack, stack_raw

SUBNET = "aws:ec2/subnet:Subnet"


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


def subnets(run, tier):
    return [r for r in run.of_type(SUBNET) if r.inputs["tags"]["hyperpod-dpd:tier"] == tier]


def test_single_gpu_subnet_in_the_configured_az_id(dev):
    gpu = subnets(dev, "gpu")
    assert len(gpu) == 1
    assert gpu[0].inputs["availabilityZoneId"] == "use2-az2"
    assert gpu[0].inputs["cidrBlock"] == "10.0.0.0/18"
    assert dev.outputs["gpuAvailabilityZoneId"] == "use2-az2"


def test_gpu_az_follows_config_not_a_hard_coded_zone():
    raw = edit(stack_raw("dev"), "hyperpod-dpd:availabilityZoneId", "use2-az3")
    run = run_stack(raw)
    assert [s.inputs["availabilityZoneId"] for s in subnets(run, "gpu")] == ["use2-az3"]


def test_private_subnets_in_control_plane_azs_and_tagged_for_internal_lbs(dev):
    private = subnets(dev, "private")
    assert sorted(s.inputs["availabilityZoneId"] for s in private) == ["use2-az1", "use2-az2"]
    assert all(s.inputs["tags"]["kubernetes.io/role/internal-elb"] == "1" for s in private)


def test_public_subnets_take_no_load_balancer_and_no_auto_public_ips(dev):
    """Nothing of the stack is internet-facing: no subnet offers itself to the load balancer
    controller for one (specs/network.py; its role is denied creating one as well)."""
    public = subnets(dev, "public")
    assert len(public) == 2
    assert not any("kubernetes.io/role/elb" in s.inputs["tags"] for s in dev.of_type(SUBNET))
    assert all(s.inputs["mapPublicIpOnLaunch"] is False for s in dev.of_type(SUBNET))


def test_s3_gateway_endpoint_on_every_private_route_table(dev):
    (endpoint,) = dev.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")
    assert endpoint.inputs["serviceName"] == "com.amazonaws.us-east-2.s3"
    assert endpoint.inputs["vpcEndpointType"] == "Gateway"
    tables = [r for r in dev.of_type("aws:ec2/routeTable:RouteTable") if "private" in r.name]
    assert len(endpoint.inputs["routeTableIds"]) == len(tables) == 1


def test_single_nat_gateway_sits_in_the_gpu_az(dev):
    (nat,) = dev.of_type("aws:ec2/natGateway:NatGateway")
    assert nat.name == "network-nat-use2-az2"


def test_per_az_nat_gateways_in_prod():
    run = run_stack(stack_raw("prod"), stack="prod")
    nats = sorted(r.name for r in run.of_type("aws:ec2/natGateway:NatGateway"))
    assert nats == ["network-nat-usw2-az1", "network-nat-usw2-az2", "network-nat-usw2-az3"]
    (endpoint,) = run.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")
    assert endpoint.inputs["serviceName"] == "com.amazonaws.us-west-2.s3"
    assert len(endpoint.inputs["routeTableIds"]) == 3


def test_default_security_group_has_no_rules(dev):
    (sg,) = dev.of_type("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")
    assert sg.inputs.get("ingress", []) == [] and sg.inputs.get("egress", []) == []


def test_vpc_dns_and_cidr(dev):
    (vpc,) = dev.of_type("aws:ec2/vpc:Vpc")
    assert vpc.inputs["cidrBlock"] == "10.0.0.0/16"
    assert vpc.inputs["enableDnsHostnames"] is True and vpc.inputs["enableDnsSupport"] is True
    for s in dev.of_type(SUBNET):
        assert ipaddress.IPv4Network(s.inputs["cidrBlock"]).subnet_of(
            ipaddress.IPv4Network("10.0.0.0/16")
        )


def test_every_ec2_networking_resource_belongs_to_the_component(dev):
    (component,) = dev.of_type("hyperpod-dpd:infra:Network")
    children = [r for r in dev.resources if r.parent == component.urn]
    networking = [
        r
        for r in dev.resources
        if r.type.startswith("aws:ec2/") and "/securityGroup:" not in r.type
    ]
    # The flow logs' key, log group and delivery role are the component's too.
    flow_logs = [r for r in children if r.name.startswith("network-flow-log")]
    assert sorted(r.urn for r in children if r not in flow_logs) == sorted(
        r.urn for r in networking if r not in flow_logs
    )
    assert all(r.name.startswith("network-") for r in children)


def test_the_vpc_logs_its_flows_to_an_encrypted_group_kept_as_configured(dev):
    """CKV2_AWS_11: flow logs on the VPC; to a KMS-encrypted group CloudWatch Logs of the Region
    may use the key for, kept network.flowLogRetentionDays."""
    import json

    (flow,) = dev.of_type("aws:ec2/flowLog:FlowLog")
    group, key = dev.named("network-flow-logs"), dev.named("network-flow-logs-key")
    assert flow.inputs["vpcId"] == dev.named("network-vpc").id
    assert flow.inputs["trafficType"] == "ALL"
    assert "network-flow-logs" in flow.inputs["logDestination"]  # the group's ARN (mocked)
    assert group.inputs["name"] == "/hyperpod-dpd/dev/vpc-flow-logs"
    assert group.inputs["retentionInDays"] == 90 and group.inputs["kmsKeyId"].startswith("arn:")
    assert key.inputs["enableKeyRotation"] is True
    logs = json.loads(key.inputs["policy"])["Statement"][1]
    assert logs["Principal"] == {"Service": "logs.us-east-2.amazonaws.com"}
    assert logs["Condition"]["ArnEquals"]["kms:EncryptionContext:aws:logs:arn"].endswith(
        ":log-group:/hyperpod-dpd/dev/vpc-flow-logs"
    )
    trust = json.loads(dev.named("network-flow-logs-role").inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Condition"]["StringEquals"] == {
        "aws:SourceAccount": "123456789012"
    }


def test_every_aws_resource_carries_the_stack_tags(dev):
    for r in dev.resources:
        if r.type.startswith("aws:ec2/") and "tags" in r.inputs:
            assert r.inputs["tags"]["hyperpod-dpd:stack"] == "dev"
