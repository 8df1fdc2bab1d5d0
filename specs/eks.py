"""The EKS control plane as the engine receives it: the endpoint-access rule judges this.

API authentication mode (HyperPod accepts API or API_AND_CONFIG_MAP) with access entries;
secrets encrypted with a customer KMS key; every control-plane log type; the public endpoint
only when CIDRs are listed.
"""

from __future__ import annotations

import json

from core.refs import ref
from core.vocabulary import EKS, EKS_CLUSTER_TYPE
from specs.base import Desired

LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]


def eks_cluster(
    name: str,
    cluster_name: str,
    kubernetes_version: str,
    subnet_ids: str,
    public_access_cidrs: list[str],
    tags: dict[str, str],
) -> Desired:
    """The cluster `{name}-cluster`; `subnet_ids` is a placeholder for the private subnets."""
    public = bool(public_access_cidrs)
    vpc_config: dict = {
        "subnetIds": subnet_ids,
        "endpointPrivateAccess": True,
        "endpointPublicAccess": public,
    }
    if public:
        vpc_config["publicAccessCidrs"] = list(public_access_cidrs)
    return Desired(
        EKS_CLUSTER_TYPE,
        f"{name}-cluster",
        (EKS,),
        {
            "name": cluster_name,
            "version": kubernetes_version,
            "roleArn": ref(f"{name}-cluster-role", "arn"),
            "vpcConfig": vpc_config,
            "accessConfig": {
                "authenticationMode": "API",
                # No implicit admin for whoever creates the cluster: the deploying role gets
                # an explicit access entry (infra/eks.py), so a role that is also listed in
                # adminRoleArns is never given two entries (409 ResourceInUseException,
                # terraform-aws-eks#2969). terraform-aws-eks defaults this off as well.
                "bootstrapClusterCreatorAdminPermissions": False,
            },
            "encryptionConfig": {
                "resources": ["secrets"],
                "provider": {"keyArn": ref(f"{name}-secrets-key", "arn")},
            },
            "enabledClusterLogTypes": LOG_TYPES,
            "tags": tags,
        },
    )


# The VPC CNI add-on enforces NetworkPolicies only when asked: its configuration key
# `enableNetworkPolicy` ("false" by default: aws/amazon-vpc-cni-k8s v1.19.5,
# charts/aws-vpc-cni/values.yaml, whose values the add-on's configuration takes; EKS user guide,
# "Restrict Pod network traffic with Kubernetes network policies",
# https://docs.aws.amazon.com/eks/latest/userguide/cni-network-policy-configure.html). It needs
# VPC CNI 1.14 or later and Kubernetes 1.25 or later (aws/amazon-vpc-cni-k8s
# docs/network-policy-faq.md); the pinned add-on (core/versions.py) is newer than both.
VPC_CNI_NETWORK_POLICY = {"enableNetworkPolicy": "true"}


def addon_configuration(network_policy: bool) -> dict[str, str]:
    """The configuration values (JSON) of each core add-on that takes any, by add-on name."""
    return {"vpc-cni": json.dumps(VPC_CNI_NETWORK_POLICY)} if network_policy else {}
