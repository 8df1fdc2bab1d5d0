"""The NetworkPolicy that keeps every pod of a namespace the stack runs pods in (each endpoint's,
the benchmark runs', the staging Job's) from the EC2 instance metadata service.

A pod that reaches 169.254.169.254 gets the credentials of its node's instance profile, the
HyperPod execution role: AmazonSageMakerClusterInstanceRolePolicy (every `sagemaker-*` bucket)
and AmazonEKS_CNI_Policy (the VPC's network interfaces) among others (specs/hyperpod.py). The
usual fix, an IMDSv2 hop limit of 1, is not this stack's to set: HyperPod launches its nodes
itself, and CreateCluster's instance groups take no metadata options (botocore's sagemaker
model, ClusterInstanceGroupSpecification: tests/specs/isolation check it). So each namespace
gets an Egress policy selecting all its pods (`podSelector: {}`, whatever labels a pod sets):
selected for Egress, a pod may open only what a rule allows
(https://kubernetes.io/docs/concepts/services-networking/network-policies/#default-deny-all-egress-traffic),
and the one rule allows every IPv4 address except the metadata service's. So DNS (kube-dns),
the router, the other role's workers, the collector, S3, ECR, STS (IRSA's web identity
exchange) and Hugging Face stay reachable as before, and so does EKS Pod Identity's agent
(169.254.170.23, https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html).
IPv6 is allowed nowhere: the clusters are IPv4 (specs/eks.py sets no IPv6 family), so the
metadata service's IPv6 address (fd00:ec2::254) is closed with every other IPv6 address. EFA's
SRD traffic bypasses the kernel and no NetworkPolicy sees it (specs/isolation/network_policies.py).

One rule, no ports: the VPC CNI's network policy agent keys its rules by CIDR, and a second rule
on 0.0.0.0/0 limited to some ports (DNS, say) overwrote this one (aws/aws-network-policy-agent#180).
`except` is enforced since agent v1.0.4, shipped with VPC CNI v1.15.1
(aws/aws-network-policy-agent#92, #120), older than every pinned VPC CNI (core/versions.py). The agent enforces
NetworkPolicies only with `networkPolicy.enabled` (specs/eks.py), which these follow.

Two gaps a NetworkPolicy leaves, and what covers them:
- the startup window: the VPC CNI's agent runs in `standard` mode, where a new pod allows
  everything until its policies reach the node (aws/amazon-vpc-cni-k8s v1.19.5 README,
  NETWORK_POLICY_ENFORCING_MODE). `strict` mode, which starts pods denied, denies for good every
  pod no policy selects, kube-system's and the add-ons' included: not this stack's to choose for
  namespaces it does not own. Instead the GPU nodes' boot script refuses every pod's forwarded
  traffic to the service (infra/lifecycle_scripts/on_create.sh guard_pod_metadata), whatever its
  namespace and from its first packet; `hyperpod-dpd verify` tries it from a pod.
- the operator's namespace (the routers): no policy here. It also runs the load balancer
  controller, which reads its VPC and Region from the metadata service when it is not given them
  (kubernetes-sigs/aws-load-balancer-controller pkg/aws/cloud.go), and the inference operator's
  add-on gives it neither (its documented configuration: executionRoleArn, the TLS bucket, the
  cluster and the roles); closing the namespace, or the system nodes it runs on, could stop the
  controller and the load balancers with it. The routers run there with their node's role
  within reach; the operator decides what runs in them.

What the pods asked the metadata service for besides credentials, the Region, is given to them:
AWS_REGION and AWS_DEFAULT_REGION (core/regions.py region_environment) in the workers'
environment (the IEC's worker.environmentVariables, specs/endpoint.py) and in both Jobs'. The
operator's own sidecars (the reverse proxy, the OpenTelemetry collector) take no environment the
IEC sets; they are the operator's to configure.
"""

from __future__ import annotations

from core.vocabulary import INSTANCE_METADATA_POLICY
from settings.stack import StackSettings
from specs.base import Desired
from specs.isolation.network_policies import policy_desired

METADATA_SERVICE = "169.254.169.254/32"  # IMDS over IPv4 (and its IPv6 address fd00:ec2::254)
ANY_IPV4 = "0.0.0.0/0"


def egress_rule() -> dict:
    """Anywhere over IPv4 but the instance metadata service, on every port."""
    return {"to": [{"ipBlock": {"cidr": ANY_IPV4, "except": [METADATA_SERVICE]}}]}


def metadata_egress(name: str, parents: tuple[str, ...], namespace: str) -> Desired:
    """The NetworkPolicy `{name}` that keeps every pod of `namespace` from the metadata service."""
    spec = {"podSelector": {}, "policyTypes": ["Egress"], "egress": [egress_rule()]}
    return policy_desired(name, parents, INSTANCE_METADATA_POLICY, namespace, spec)


def guarded_namespace(
    s: StackSettings, name: str, parents: tuple[str, ...], namespace: str
) -> Desired | None:
    """`metadata_egress` for a namespace of stack `s`, None when the stack enforces no
    NetworkPolicies (`networkPolicy.enabled` false: the VPC CNI would not enforce it)."""
    return metadata_egress(name, parents, namespace) if s.network_policy.enabled else None
