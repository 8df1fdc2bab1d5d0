"""The EKS control plane that orchestrates the HyperPod cluster.

`aws.eks.Cluster` (not the pulumi-eks component) so that every input is visible to the mock
engine and to the policy gate. The cluster itself is registered from its spec (specs/eks.py);
around it: a customer KMS key for secrets, access entries for the admin roles, an OIDC provider
for IRSA and the pinned core add-ons.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from core.versions import EKS_ADDON_VERSIONS
from core.vocabulary import ADMINS_GROUP, EKS
from infra.iam import role_with_policies, service_trust
from program.outputs import Outputs
from settings.cluster.groups import access_entry_key
from specs.base import Desired
from specs.iam import managed_policy

# Add-ons that run as DaemonSets and must exist before HyperPod nodes join. coredns is a
# Deployment: created after the cluster has nodes (see create_node_addons), or it never becomes
# healthy and the create times out.
PRE_NODE_ADDONS = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
ADMIN_POLICY, VIEW_POLICY = "AmazonEKSClusterAdminPolicy", "AmazonEKSViewPolicy"


@dataclass(frozen=True)
class EksArgs:
    cluster: Desired  # specs/eks.py
    cluster_name: str
    kubernetes_version: str
    admin_role_arns: list[str]
    region: str
    outputs: Outputs  # resolves the private subnets; publishes the cluster's ARN and group
    view_role_arns: list[str] = field(default_factory=list)
    # The role running `pulumi up` (program/stack_config.py:deployer_arn), made a cluster admin;
    # None: eks.deployerAdmin is false.
    deployer_arn: str | None = None
    protect: bool = False  # the cluster: deleting or replacing it loses every workload
    # Configuration values (JSON) by add-on name (specs/eks.py addon_configuration).
    addon_configuration: dict[str, str] = field(default_factory=dict)
    partition: str = "aws"
    tags: dict[str, str] = field(default_factory=dict)


class Eks(pulumi.ComponentResource):
    cluster: aws.eks.Cluster
    oidc_provider: aws.iam.OpenIdConnectProvider
    provider: k8s.Provider
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, args: EksArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(EKS, name, None, opts)
        self._name, self._args = name, args
        self.kms_key = self._create_kms_key()
        self.cluster = self._create_cluster()
        self.oidc_provider = self._create_oidc_provider()
        self.oidc_issuer = self.cluster.identities[0].oidcs[0].issuer
        self.access_entries = self._create_access_entries()
        self.addons = {a: self._create_addon(a) for a in PRE_NODE_ADDONS}
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(
                self.cluster.name, self.cluster.endpoint, self.cluster.certificate_authority.data
            ).apply(lambda v: render_kubeconfig(*v, region=args.region))
        )
        self.provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Server-side apply: field ownership survives the operator's own edits.
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(self.access_entries)),
        )
        # Not complete yet: its last child, coredns, needs the nodes of a HyperPod cluster that
        # needs this one. create_node_addons adds it and registers the outputs.

    def _opts(self, **kwargs) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **kwargs)

    def _create_kms_key(self) -> aws.kms.Key:
        return aws.kms.Key(
            f"{self._name}-secrets-key",
            description=f"EKS secrets encryption for {self._args.cluster_name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=self._args.tags,
            opts=self._opts(),
        )

    def _create_cluster(self) -> aws.eks.Cluster:
        a, out = self._args, self._args.outputs
        role = role_with_policies(
            f"{self._name}-cluster-role",
            service_trust("eks.amazonaws.com"),
            {f"{self._name}-cluster-policy": managed_policy(a.partition, "AmazonEKSClusterPolicy")},
            parent=self,
            tags=a.tags,
        )
        out.publish(f"{self._name}-cluster-role", arn=role.role.arn)
        out.publish(f"{self._name}-secrets-key", arn=self.kms_key.arn)
        cluster = aws.eks.Cluster(
            a.cluster.name,
            **out.resolve(a.cluster.kwargs()),
            opts=self._opts(
                depends_on=role.grants,
                protect=a.protect,
                # Create-only and forcing replacement (terraform-provider-aws#35824): clusters
                # created when the stack still set it true keep their value.
                ignore_changes=["accessConfig.bootstrapClusterCreatorAdminPermissions"],
            ),
        )
        out.publish(
            a.cluster.name,
            arn=cluster.arn,
            clusterSecurityGroupId=cluster.vpc_config.cluster_security_group_id,
        )
        return cluster

    def _create_oidc_provider(self) -> aws.iam.OpenIdConnectProvider:
        return aws.iam.OpenIdConnectProvider(
            f"{self._name}-oidc",
            url=self.cluster.identities[0].oidcs[0].issuer,
            client_id_lists=["sts.amazonaws.com"],
            tags=self._args.tags,
            opts=self._opts(),
        )

    def _create_access_entries(self) -> list[aws.eks.AccessPolicyAssociation]:
        """Cluster-admin for eks.adminRoleArns (and the deploying role), read-only for
        eks.viewRoleArns: one entry per principal (settings/cluster/groups.py refuses duplicates)."""
        a = self._args
        entries = [
            (f"admin-{access_entry_key(arn)}", arn, ADMIN_POLICY) for arn in a.admin_role_arns
        ]
        entries += [(f"view-{access_entry_key(arn)}", arn, VIEW_POLICY) for arn in a.view_role_arns]
        if a.deployer_arn is not None:
            entries.append(("deployer", a.deployer_arn, ADMIN_POLICY))
        return [self._access_entry(key, arn, policy) for key, arn, policy in entries]

    def _access_entry(
        self, key: str, principal_arn: pulumi.Input[str], policy: str
    ) -> aws.eks.AccessPolicyAssociation:
        entry = aws.eks.AccessEntry(
            f"{self._name}-{key}",
            cluster_name=self.cluster.name,
            principal_arn=principal_arn,
            type="STANDARD",
            # Admins' requests carry this group, which the endpoints' admission policies let
            # run pods there (specs/isolation/admission.py); bound to no RBAC role, it grants
            # nothing itself (the access policy does).
            kubernetes_groups=[ADMINS_GROUP] if policy == ADMIN_POLICY else None,
            opts=self._opts(),
        )
        return aws.eks.AccessPolicyAssociation(
            f"{self._name}-{key}-policy",
            cluster_name=self.cluster.name,
            principal_arn=entry.principal_arn,
            policy_arn=f"arn:{self._args.partition}:eks::aws:cluster-access-policy/{policy}",
            access_scope={"type": "cluster"},
            opts=self._opts(),
        )

    def _create_addon(
        self, addon: str, depends_on: list[pulumi.Resource] | None = None
    ) -> aws.eks.Addon:
        return aws.eks.Addon(
            f"{self._name}-{addon}",
            cluster_name=self.cluster.name,
            addon_name=addon,
            addon_version=EKS_ADDON_VERSIONS[self._args.kubernetes_version][addon],
            configuration_values=self._args.addon_configuration.get(addon),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="PRESERVE",
            tags=self._args.tags,
            opts=self._opts(depends_on=depends_on or []),
        )

    def create_node_addons(self, nodes: pulumi.Resource) -> None:
        """Add-ons that need running nodes (coredns), after the HyperPod cluster exists; then the
        component is complete and registers its outputs (call it once, last)."""
        self.addons["coredns"] = self._create_addon("coredns", depends_on=[nodes])
        self.register_outputs(
            {
                "clusterName": self.cluster.name,
                "clusterArn": self.cluster.arn,
                "oidcProviderArn": self.oidc_provider.arn,
                "kubeconfig": self.kubeconfig,
            }
        )


def render_kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that authenticates with `aws eks get-token` (no long-lived credentials)."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster_name,
                    "cluster": {"server": endpoint, "certificate-authority-data": ca_data},
                }
            ],
            "contexts": [
                {"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}
            ],
            "current-context": cluster_name,
            "users": [
                {
                    "name": cluster_name,
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": [
                                "eks",
                                "get-token",
                                "--cluster-name",
                                cluster_name,
                                "--region",
                                region,
                                "--output",
                                "json",
                            ],
                        }
                    },
                }
            ],
        }
    )
