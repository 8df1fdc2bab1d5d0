"""EFA security group rules and the EKS control plane's access settings."""

from __future__ import annotations

import json

import pytest

from tests.conftest import edit, run_stack, stack_raw


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


@pytest.fixture(scope="module")
def prod():
    return run_stack(stack_raw("prod"), stack="prod")


def rules(run, kind):
    return run.of_type(f"aws:vpc/securityGroup{kind}Rule:SecurityGroup{kind}Rule")


def test_efa_group_allows_all_traffic_to_and_from_itself(dev):
    sg = dev.named("nodes-sg")
    for kind in ("Ingress", "Egress"):
        self_rules = [
            r
            for r in rules(dev, kind)
            if r.inputs.get("referencedSecurityGroupId") == sg.id
            and r.inputs["securityGroupId"] == sg.id
        ]
        assert len(self_rules) == 1, kind
        assert self_rules[0].inputs["ipProtocol"] == "-1"
        assert self_rules[0].inputs["securityGroupId"] == sg.id


def test_no_ingress_from_the_internet(dev, prod):
    for run in (dev, prod):
        for r in rules(run, "Ingress"):
            assert r.inputs.get("cidrIpv4") not in ("0.0.0.0/0",)
            assert r.inputs.get("cidrIpv6") not in ("::/0",)


def test_efa_group_is_attached_to_every_gpu_group_and_the_cluster(dev):
    sg = dev.named("nodes-sg")
    (cluster,) = dev.of_type("aws-native:sagemaker:Cluster")
    assert cluster.inputs["vpcConfig"]["securityGroupIds"] == [sg.id]
    for g in cluster.inputs["instanceGroups"]:
        if g["instanceGroupName"] != "system":
            assert g["overrideVpcConfig"]["securityGroupIds"] == [sg.id]


def test_eks_public_endpoint_only_with_cidrs(dev, prod):
    (dev_eks,) = dev.of_type("aws:eks/cluster:Cluster")
    assert dev_eks.inputs["vpcConfig"]["endpointPublicAccess"] is True
    assert dev_eks.inputs["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    (prod_eks,) = prod.of_type("aws:eks/cluster:Cluster")
    assert prod_eks.inputs["vpcConfig"]["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in prod_eks.inputs["vpcConfig"]
    for eks in (dev_eks, prod_eks):
        assert eks.inputs["vpcConfig"]["endpointPrivateAccess"] is True


def test_eks_auth_encryption_logging_and_version(dev):
    (eks,) = dev.of_type("aws:eks/cluster:Cluster")
    i = eks.inputs
    assert i["accessConfig"]["authenticationMode"] == "API"
    assert i["version"] == "1.33"
    assert i["encryptionConfig"]["resources"] == ["secrets"]
    key = dev.named("eks-secrets-key")
    assert i["encryptionConfig"]["provider"]["keyArn"].endswith(key.id)
    assert key.inputs["enableKeyRotation"] is True
    assert set(i["enabledClusterLogTypes"]) == {
        "api",
        "audit",
        "authenticator",
        "controllerManager",
        "scheduler",
    }
    # Control plane in the private subnets only.
    subnet_tiers = {
        dev.by_id(s).inputs["tags"]["hyperpod-dpd:tier"] for s in i["vpcConfig"]["subnetIds"]
    }
    assert subnet_tiers == {"private"}


def test_access_entries_keyed_by_role_name(dev, prod):
    entries = {r.name: r for r in prod.of_type("aws:eks/accessEntry:AccessEntry")}
    assert sorted(entries) == [
        "eks-admin-inferenceoncall",
        "eks-admin-platformadmin",
        "eks-deployer",
    ]
    policies = {
        r.name: r.inputs["policyArn"].rsplit("/", 1)[-1]
        for r in prod.of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    }
    assert policies == {
        "eks-admin-inferenceoncall-policy": "AmazonEKSClusterAdminPolicy",
        "eks-admin-platformadmin-policy": "AmazonEKSClusterAdminPolicy",
        "eks-deployer-policy": "AmazonEKSClusterAdminPolicy",
    }
    # dev's pull requests preview it: their read-only role (ci.previewRoleArn) reads the
    # cluster without being listed in eks.viewRoleArns too.
    view = dev.named("eks-view-hyperpod-dpd-dev-preview-policy")
    assert view.inputs["policyArn"].endswith("/AmazonEKSViewPolicy")
    assert dev.named("eks-view-hyperpod-dpd-dev-preview").inputs["principalArn"] == (
        "arn:aws:iam::111122223333:role/hyperpod-dpd-dev-preview"
    )


def test_the_deployer_gets_an_explicit_entry_not_the_implicit_creator_admin(prod):
    (eks,) = prod.of_type("aws:eks/cluster:Cluster")
    assert eks.inputs["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is False
    # The stack names its deploy role (ci.deployRoleArn): that role, whoever runs the program.
    deployer = prod.named("eks-deployer").inputs["principalArn"]
    assert deployer == "arn:aws:iam::444455556666:role/hyperpod-dpd-prod-deploy"
    # The Kubernetes provider (charts, endpoint) waits for the deployer's access.
    provider = prod.named("eks-k8s")
    assert prod.named("eks-deployer-policy").urn in provider.depends_on


def test_without_a_named_deploy_role_the_sessions_issuer_deploys():
    raw = edit(stack_raw("prod"), "hyperpod-dpd:ci.deployRoleArn")
    # The session's issuer: an assumed role's session ARN becomes the role's ARN.
    deployer = run_stack(raw, stack="prod").named("eks-deployer").inputs["principalArn"]
    assert deployer == "arn:aws:iam::123456789012:role/offline-plan"


def test_a_pull_requests_preview_plans_the_same_deployer_entry():
    """A pull request's preview runs the program as the read-only preview role, a viewer of
    the cluster. With the deploy role named, the deployer's entry stays the deploy role's (the
    preview shows no change of it) and the previewer being a viewer stops nothing; before,
    the program took the caller for the deployer and stopped on it."""
    caller = "arn:aws:iam::123456789012:role/offline-plan"  # the fake session's issuer
    raw = edit(stack_raw("dev"), "hyperpod-dpd:eks.viewRoleArns", [caller])
    entries = {r.name: r for r in run_stack(raw).of_type("aws:eks/accessEntry:AccessEntry")}
    assert entries["eks-deployer"].inputs["principalArn"] == (
        "arn:aws:iam::111122223333:role/hyperpod-dpd-dev-deploy"
    )
    assert entries["eks-view-offline-plan"].inputs["principalArn"] == caller


def test_the_deployer_listed_as_admin_stops_the_program_with_the_key():
    from hyperpod_dpd.plan.engine import run_program
    from program.stack_config import StackConfigError
    from tests.conftest import ROOT, as_pulumi_config

    raw = edit(
        stack_raw("dev"),
        "hyperpod-dpd:eks.adminRoleArns",
        ["arn:aws:iam::123456789012:role/offline-plan"],
    )
    edit(raw, "hyperpod-dpd:ci.deployRoleArn")  # asked of AWS, as without ci
    # Only AWS knows the deployer: it is asked (read-only) after the gate, before anything is
    # registered, and the error is a config error naming the key.
    recorded: list = []
    with pytest.raises(StackConfigError, match=r"hyperpod-dpd:eks\.deployerAdmin: got true") as err:
        run_program(ROOT / "__main__.py", as_pulumi_config(raw), [], project="hyperpod-dpd",
                    stack="dev", recorded=recorded)  # fmt: skip
    assert recorded == []  # not a VPC: the stop comes before the first registration
    assert "arn:aws:iam::123456789012:role/offline-plan" in str(err.value)
    assert "set hyperpod-dpd:eks.deployerAdmin false" in str(err.value)
    edit(raw, "hyperpod-dpd:eks.deployerAdmin", False)
    names = [r.name for r in run_stack(raw).of_type("aws:eks/accessEntry:AccessEntry")]
    assert "eks-deployer" not in names and "eks-admin-offline-plan" in names


def test_prod_protects_the_stateful_resources(dev, prod):
    protected = sorted(r.name for r in prod.resources if r.protect)
    assert protected == ["eks-cluster", "hyperpod-cluster", "models-bucket"]
    assert [r.name for r in dev.resources if r.protect] == []


def test_core_addons_are_pinned(dev):
    versions = {
        r.inputs["addonName"]: r.inputs["addonVersion"]
        for r in dev.of_type("aws:eks/addon:Addon")
        if r.name.startswith("eks-")  # the Eks component's core add-ons
    }
    assert versions == {
        "vpc-cni": "v1.19.5-eksbuild.1",
        "kube-proxy": "v1.33.0-eksbuild.2",
        "eks-pod-identity-agent": "v1.3.8-eksbuild.2",
        "coredns": "v1.12.1-eksbuild.2",
    }


def test_oidc_provider_for_irsa(dev):
    (oidc,) = dev.of_type("aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    assert oidc.inputs["url"].startswith("https://oidc.eks.us-east-2.amazonaws.com/id/")


def test_kubeconfig_is_secret_and_uses_aws_eks_get_token(dev):
    assert dev.outputs["kubeconfig"] == "[secret]"
    from infra.eks import render_kubeconfig

    config = json.loads(render_kubeconfig("c", "https://x", "Q0E=", region="us-east-2"))
    assert config["users"][0]["user"]["exec"]["args"] == [
        "eks",
        "get-token",
        "--cluster-name",
        "c",
        "--region",
        "us-east-2",
        "--output",
        "json",
    ]


def test_buckets_are_private_encrypted_versioned_and_tls_only(dev):
    for bucket in ("lifecycle-scripts", "models", "inference-operator-tls"):
        block = dev.named(f"{bucket}-public-access-block").inputs
        assert all(
            block[k]
            for k in (
                "blockPublicAcls",
                "blockPublicPolicy",
                "ignorePublicAcls",
                "restrictPublicBuckets",
            )
        )
        enc = dev.named(f"{bucket}-encryption").inputs["rules"][0]
        assert enc["applyServerSideEncryptionByDefault"]["sseAlgorithm"] in ("AES256", "aws:kms")
        assert dev.named(f"{bucket}-versioning").inputs["versioningConfiguration"] == {
            "status": "Enabled"
        }
        # The first statement; the lifecycle bucket's second keeps its scripts to the deployers
        # (tests/security/test_boot_scripts.py).
        deny, *more = json.loads(dev.named(f"{bucket}-tls-only").inputs["policy"])["Statement"]
        assert deny["Effect"] == "Deny"
        assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        assert [s["Sid"] for s in more] == (
            ["DenyChangesButByDeployers"] if bucket == "lifecycle-scripts" else []
        )


def test_model_bucket_is_retained_on_delete_with_its_guards(dev):
    retained = sorted(r.name for r in dev.resources if r.retain_on_delete)
    assert retained == sorted(
        f"models-{part}"
        for part in (
            "bucket",
            "public-access-block",
            "ownership",
            "encryption",
            "versioning",
            "tls-only",
        )
    )


def test_placement_resolves_the_az_name_and_optional_group():
    from tests.conftest import edit

    run = run_stack(edit(stack_raw("dev"), "hyperpod-dpd:network.placementGroup", True))
    (pg,) = run.of_type("aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster"
    assert run.outputs["gpuAvailabilityZone"] == "us-east-2b"


def test_nodes_reach_the_eks_api_through_the_cluster_security_group(dev):
    rule = dev.named("nodes-cluster-ingress-from-nodes").inputs
    assert rule["referencedSecurityGroupId"] == dev.named("nodes-sg").id
    assert (rule["ipProtocol"], rule["fromPort"], rule["toPort"]) == ("tcp", 443, 443)
    # The EKS-managed cluster security group (an output of the cluster), not the nodes' group.
    assert rule["securityGroupId"] != dev.named("nodes-sg").id
    assert rule["securityGroupId"].startswith("sg-0")
