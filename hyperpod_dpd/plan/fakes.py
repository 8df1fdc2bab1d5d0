"""A fake AWS/Kubernetes for the mock engine: ids, ARNs and names built from the inputs.

Values are deterministic (derived from the resource's type and name), so two plans of the same
config are byte-identical and a plan diff shows only real changes. Each fake mirrors what the
provider returns for the outputs the program reads; a resource type without an entry gets its
inputs back plus a generic id and ARN.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.regions import az_id_prefix
from core.vocabulary import ELB_NAME_MAX

ACCOUNT_ID = "123456789012"
# Resource types whose physical name Pulumi generates when the program gives none, and the
# input property that carries it.
AUTONAMED = {
    "aws:s3/bucket:Bucket": "bucket",
    "aws:iam/role:Role": "name",
    "aws:iam/policy:Policy": "name",
    "aws:ec2/placementGroup:PlacementGroup": "name",
    "aws:lb/loadBalancer:LoadBalancer": "name",
    "aws:lb/targetGroup:TargetGroup": "name",
}


class UnknownInvokeError(RuntimeError):
    pass


def _hex(*parts: str, n: int = 17) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:n]


def az_name(region: str, az_id: str) -> str:
    """A plausible AZ name for an AZ ID (accounts map them differently; tests only need one)."""
    return region + string.ascii_lowercase[int(az_id.rsplit("-az", 1)[1]) - 1]


@dataclass
class FakeCloud:
    region: str
    account_id: str = ACCOUNT_ID
    # A first `pulumi preview`: nothing exists yet, so a resource's outputs are unknown except
    # the inputs it was given and the name Pulumi's auto-naming picks (the provider's Check).
    preview: bool = False

    def arn(self, service: str, resource: str, *, regional: bool = True) -> str:
        region = self.region if regional else ""
        account = self.account_id if service != "s3" else ""
        return f"arn:aws:{service}:{region}:{account}:{resource}"

    def create(self, type_: str, name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        rid, state = self._create(type_, name, inputs)
        if not self.preview or type_.startswith("pulumi:providers:"):
            return rid, state
        known = dict(inputs)
        key = AUTONAMED.get(type_)
        if key and key in state:
            known[key] = state[key]
        return "", known  # no id: the SDK resolves the id and missing outputs as unknown

    def _create(self, type_: str, name: str, inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if type_.startswith("pulumi:providers:"):
            return f"{name}-provider", dict(inputs)
        if type_.startswith("kubernetes:"):
            meta = inputs.get("metadata") or {}
            ns = meta.get("namespace")
            rid = f"{ns}/{meta.get('name', name)}" if ns else meta.get("name", name)
            return rid, dict(inputs)
        builder = _BUILDERS.get(type_)
        if builder is not None:
            return builder(self, name, inputs)
        module = type_.split(":")[1].split("/")[0] if ":" in type_ else "resource"
        rid = f"{name}-{_hex(type_, name, n=8)}"
        return rid, {**inputs, "arn": self.arn(module, f"{module}/{rid}")}

    def invoke(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = _INVOKES.get(token)
        if handler is None:
            raise UnknownInvokeError(
                f"the offline engine has no fake for invoke '{token}'; add one to "
                "hyperpod_dpd/plan/fakes.py (_INVOKES)"
            )
        return handler(self, args)


def _ec2(prefix: str, kind: str) -> Callable[[FakeCloud, str, dict[str, Any]], tuple[str, dict]]:
    def build(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        rid = f"{prefix}-0{_hex(kind, name, n=16)}"
        state = {**inputs, "arn": cloud.arn("ec2", f"{kind}/{rid}"), "ownerId": cloud.account_id}
        if "availabilityZoneId" in inputs:
            state["availabilityZone"] = az_name(cloud.region, inputs["availabilityZoneId"])
        if kind == "vpc":
            state.update(defaultSecurityGroupId=f"sg-0{_hex('default-sg', name, n=16)}")
            state.update(mainRouteTableId=f"rtb-0{_hex('main-rtb', name, n=16)}")
        if kind == "elastic-ip":
            state.update(allocationId=rid, publicIp="198.51.100." + str(int(_hex(name, n=2), 16)))
        return rid, state

    return build


def _autoname(
    name: str, inputs: dict[str, Any], key: str = "name", max_length: int | None = None
) -> str:
    """Pulumi's auto-naming: the logical name plus a random suffix, here a stable one. Where
    the provider caps the name's length (tfbridge AutoName(key, max_length, "-")), a logical
    name too long for it fails as the provider fails it, never cut to fit: `pulumi up` cuts
    nothing either."""
    given = inputs.get(key)
    if given:
        return given
    physical = f"{name}-{_hex('autoname', name, n=7)}"
    if max_length is not None and len(physical) > max_length:
        raise ValueError(
            f"name '{name}-' plus 7 random chars is longer than maximum length {max_length}"
        )
    return physical


def _iam_role(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    prefix = inputs.get("namePrefix")
    role = inputs.get("name") or (f"{prefix}{_hex('role', name, n=26)}" if prefix else None)
    role = role or _autoname(name, inputs)
    arn = f"arn:aws:iam::{cloud.account_id}:role/{role}"
    return role, {**inputs, "name": role, "arn": arn, "uniqueId": f"AROA{_hex(role, n=17).upper()}"}


def _kms_key(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    key_id = (
        f"{_hex(name, n=8)}-{_hex(name, 'b', n=4)}-{_hex(name, 'c', n=4)}-{_hex(name, 'd', n=4)}"
    )
    key_id += f"-{_hex(name, 'e', n=12)}"
    return key_id, {**inputs, "keyId": key_id, "arn": cloud.arn("kms", f"key/{key_id}")}


def _eks_cluster(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    cluster = _autoname(name, inputs)
    oidc_id = _hex(cluster, "oidc", n=32).upper()
    vpc = {**inputs.get("vpcConfig", {}), "clusterSecurityGroupId": f"sg-0{_hex(cluster, n=16)}"}
    return cluster, {
        **inputs,
        "name": cluster,
        "arn": cloud.arn("eks", f"cluster/{cluster}"),
        "endpoint": f"https://{oidc_id}.gr7.{cloud.region}.eks.amazonaws.com",
        "certificateAuthority": {"data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="},
        "identities": [
            {"oidcs": [{"issuer": f"https://oidc.eks.{cloud.region}.amazonaws.com/id/{oidc_id}"}]}
        ],
        "vpcConfig": vpc,
        "status": "ACTIVE",
    }


def _oidc_provider(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    host = str(inputs.get("url", name)).removeprefix("https://")
    arn = f"arn:aws:iam::{cloud.account_id}:oidc-provider/{host}"
    return arn, {**inputs, "arn": arn}


def _s3_bucket(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    prefix = inputs.get("bucketPrefix")
    generated = f"{prefix}{_hex('bucket', name, n=20)}" if prefix else None
    bucket = inputs.get("bucket") or generated or _autoname(name, inputs, key="bucket")
    return bucket, {
        **inputs,
        "bucket": bucket,
        "arn": f"arn:aws:s3:::{bucket}",
        "bucketRegionalDomainName": f"{bucket}.s3.{cloud.region}.amazonaws.com",
        "region": cloud.region,
    }


def _s3_object(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    """An object of a versioned bucket: S3 gives each write its own version ID (here one per
    content, from the object's ETag)."""
    version = _hex("version", name, str(inputs.get("etag", "")), n=32)
    return f"{inputs.get('bucket')}/{inputs.get('key')}", {**inputs, "versionId": version}


def _hyperpod_cluster(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    cluster_id = _hex("hyperpod", name, n=12)
    arn = cloud.arn("sagemaker", f"cluster/{cluster_id}")
    return arn, {**inputs, "clusterArn": arn, "clusterStatus": "InService"}


def _iam_policy(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    policy = _autoname(name, inputs)
    arn = f"arn:aws:iam::{cloud.account_id}:policy/{policy}"
    return arn, {**inputs, "name": policy, "arn": arn}


def _amp_workspace(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    ws = f"ws-{_hex('amp', name, n=8)}-{_hex('amp2', name, n=4)}-{_hex('amp3', name, n=4)}"
    return ws, {
        **inputs,
        "arn": cloud.arn("aps", f"workspace/{ws}"),
        "prometheusEndpoint": f"https://aps-workspaces.{cloud.region}.amazonaws.com/workspaces/{ws}/",
    }


def _grafana_workspace(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    ws = f"g-{_hex('amg', name, n=10)}"
    return ws, {
        **inputs,
        "arn": cloud.arn("grafana", f"/workspaces/{ws}"),
        "endpoint": f"{ws}.grafana-workspace.{cloud.region}.amazonaws.com",
    }


def _named(service: str, kind: str) -> Callable[[FakeCloud, str, dict[str, Any]], tuple[str, dict]]:
    def build(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        physical = _autoname(name, inputs)
        return physical, {
            **inputs,
            "name": physical,
            "arn": cloud.arn(service, f"{kind}/{physical}"),
        }

    return build


def _load_balancing(kind: str) -> Callable[[FakeCloud, str, dict[str, Any]], tuple[str, dict]]:
    """An ALB, target group or listener: ids are their ARNs; a load balancer has a DNS name."""

    def build(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        capped = kind in ("loadbalancer/app", "targetgroup")  # a listener (rule) has no name
        physical = _autoname(name, inputs, max_length=ELB_NAME_MAX if capped else None)
        arn = cloud.arn("elasticloadbalancing", f"{kind}/{physical}/{_hex(kind, name, n=16)}")
        state = {**inputs, "arn": arn}
        if kind == "loadbalancer/app":
            state.update(
                name=physical,
                dnsName=f"internal-{physical}.{cloud.region}.elb.amazonaws.com",
                # The Region's canonical hosted zone of its load balancers (an alias's target).
                zoneId=f"Z{_hex('elb-zone', cloud.region, n=13).upper()}",
            )
        if kind == "targetgroup":
            state.update(name=physical)
        return arn, state

    return build


def _random_password(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
    """A stable stand-in of the generated text, of the asked length, lowercase and digits (what
    the stack asks for); the SDK marks `result` secret, so no plan shows it."""
    length = int(inputs.get("length") or 16)
    text = "".join(_hex("random-password", name, str(i), n=64) for i in range(length // 64 + 1))
    return "none", {**inputs, "result": text[:length], "bcryptHash": "[fake]"}


def _route53(kind: str) -> Callable[[FakeCloud, str, dict[str, Any]], tuple[str, dict]]:
    """A record (its id: zone, name and type) or a zone's VPC association (zone:vpc)."""

    def build(cloud: FakeCloud, name: str, inputs: dict[str, Any]) -> tuple[str, dict]:
        zone = inputs.get("zoneId", "")
        if kind == "record":
            rid = f"{zone}_{inputs.get('name', name)}_{inputs.get('type', 'A')}"
            return rid, {**inputs, "fqdn": inputs.get("name", name)}
        return f"{zone}:{inputs.get('vpcId', '')}", {**inputs, "owningAccount": cloud.account_id}

    return build


_BUILDERS: dict[str, Callable[[FakeCloud, str, dict[str, Any]], tuple[str, dict]]] = {
    "aws:lb/loadBalancer:LoadBalancer": _load_balancing("loadbalancer/app"),
    "aws:lb/listenerRule:ListenerRule": _load_balancing("listener-rule/app"),
    "aws:route53/record:Record": _route53("record"),
    "aws:route53/zoneAssociation:ZoneAssociation": _route53("association"),
    "random:index/randomPassword:RandomPassword": _random_password,
    "aws:lb/targetGroup:TargetGroup": _load_balancing("targetgroup"),
    "aws:lb/listener:Listener": _load_balancing("listener/app"),
    "aws:iam/role:Role": _iam_role,
    "aws:kms/key:Key": _kms_key,
    "aws:eks/cluster:Cluster": _eks_cluster,
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _oidc_provider,
    "aws:s3/bucket:Bucket": _s3_bucket,
    "aws:s3/bucketObjectv2:BucketObjectv2": _s3_object,
    "aws-native:sagemaker:Cluster": _hyperpod_cluster,
    "aws:ec2/placementGroup:PlacementGroup": _named("ec2", "placement-group"),
    "aws:iam/policy:Policy": _iam_policy,
    "aws:amp/workspace:Workspace": _amp_workspace,
    "aws:grafana/workspace:Workspace": _grafana_workspace,
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": _ec2("sgr", "security-group-rule"),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": _ec2("sgr", "security-group-rule"),
    "aws:ec2/vpc:Vpc": _ec2("vpc", "vpc"),
    "aws:ec2/subnet:Subnet": _ec2("subnet", "subnet"),
    "aws:ec2/internetGateway:InternetGateway": _ec2("igw", "internet-gateway"),
    "aws:ec2/natGateway:NatGateway": _ec2("nat", "natgateway"),
    "aws:ec2/eip:Eip": _ec2("eipalloc", "elastic-ip"),
    "aws:ec2/routeTable:RouteTable": _ec2("rtb", "route-table"),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": _ec2("rtbassoc", "route-table-assoc"),
    "aws:ec2/vpcEndpoint:VpcEndpoint": _ec2("vpce", "vpc-endpoint"),
    "aws:ec2/securityGroup:SecurityGroup": _ec2("sg", "security-group"),
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": _ec2("sg", "security-group"),
}

_INVOKES: dict[str, Callable[[FakeCloud, dict[str, Any]], dict[str, Any]]] = {
    "aws:index/getCallerIdentity:getCallerIdentity": lambda c, _: {
        "accountId": c.account_id,
        "arn": f"arn:aws:sts::{c.account_id}:assumed-role/offline-plan/hyperpod-dpd",
        "userId": "AROAOFFLINEPLAN",
        "id": c.account_id,
    },
    "aws:index/getRegion:getRegion": lambda c, _: {
        "name": c.region,
        "region": c.region,
        "id": c.region,
        "endpoint": f"ec2.{c.region}.amazonaws.com",
    },
    "aws:index/getAvailabilityZones:getAvailabilityZones": lambda c, args: _zones(c, args),
    # An assumed role's session ARN -> the role's ARN (the issuer), as STS and IAM resolve it.
    "aws:iam/getSessionContext:getSessionContext": lambda c, args: {
        "arn": args["arn"],
        "issuerArn": re.sub(
            r"^arn:aws:sts::(\d+):assumed-role/([^/]+)/.*$", r"arn:aws:iam::\1:role/\2", args["arn"]
        ),
        "issuerId": "AROAOFFLINEPLAN",
        "issuerName": args["arn"].split("/")[1] if "/" in args["arn"] else "",
        "sessionName": args["arn"].rsplit("/", 1)[-1],
        "id": args["arn"],
    },
    "aws:index/getPartition:getPartition": lambda c, _: {
        "partition": "aws",
        "dnsSuffix": "amazonaws.com",
        "id": "aws",
    },
}


def _zones(cloud: FakeCloud, args: dict[str, Any]) -> dict[str, Any]:
    """Answer getAvailabilityZones, honouring a zone-id filter as EC2 does."""
    ids = [f"{az_id_prefix(cloud.region)}-az{n}" for n in range(1, 4)]
    for f in args.get("filters") or []:
        if f.get("name") == "zone-id":
            ids = [i for i in ids if i in f.get("values", [])] or [
                v for v in f.get("values", []) if v.startswith(az_id_prefix(cloud.region) + "-az")
            ]
    return {
        "id": cloud.region,
        "names": [az_name(cloud.region, i) for i in ids],
        "zoneIds": ids,
        "groupNames": [cloud.region] * len(ids),
    }
