"""The inference operator add-on, its dependency add-ons, its IAM, and the version gate."""

from __future__ import annotations

import json

import pytest

from settings import ConfigError, parse_settings
from tests.conftest import edit, run_stack, stack_raw

NS = "hyperpod-dpd"


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


def addons(run) -> dict:
    return {r.inputs["addonName"]: r for r in run.of_type("aws:eks/addon:Addon")}


def trust(run, name) -> list[dict]:
    return json.loads(run.named(name).inputs["assumeRolePolicy"])["Statement"]


def subjects(statements) -> list[str]:
    return [
        v
        for s in statements
        for k, v in s.get("Condition", {}).get("StringEquals", {}).items()
        if k.endswith(":sub")
    ]


def test_addons_are_pinned(dev):
    versions = {name: r.inputs["addonVersion"] for name, r in addons(dev).items()}
    assert versions["amazon-sagemaker-hyperpod-inference"] == "v1.4.0-eksbuild.1"
    assert versions["aws-mountpoint-s3-csi-driver"] == "v1.14.1-eksbuild.1"
    assert versions["aws-fsx-csi-driver"] == "v1.6.0-eksbuild.1"
    assert versions["metrics-server"] == "v0.7.2-eksbuild.4"
    assert versions["cert-manager"] == "v1.18.2-eksbuild.2"
    assert versions["amazon-sagemaker-hyperpod-observability"] == "v1.0.5-eksbuild.1"


def test_dependency_addons_precede_the_inference_addon(dev):
    a = addons(dev)
    inference = a["amazon-sagemaker-hyperpod-inference"]
    for dep in (
        "aws-mountpoint-s3-csi-driver",
        "aws-fsx-csi-driver",
        "metrics-server",
        "cert-manager",
    ):
        assert a[dep].urn in inference.depends_on, dep
    (cluster,) = dev.of_type("aws-native:sagemaker:Cluster")
    assert cluster.urn in inference.depends_on


def test_endpoint_waits_for_the_operator(dev):
    inference = addons(dev)["amazon-sagemaker-hyperpod-inference"]
    assert inference.urn in dev.named("endpoint-iec").depends_on


def test_configuration_values_parse_and_carry_the_documented_keys(dev):
    config = json.loads(
        addons(dev)["amazon-sagemaker-hyperpod-inference"].inputs["configurationValues"]
    )
    assert set(config) == {
        "executionRoleArn",
        "tlsCertificateS3Bucket",
        "hyperpodClusterArn",
        "alb",
        "keda",
    }
    assert config["executionRoleArn"].startswith(
        "arn:aws:iam::123456789012:role/SageMakerHyperPodInference-dev-"
    )
    assert config["tlsCertificateS3Bucket"].startswith("hyperpod-tls-")
    assert config["hyperpodClusterArn"].startswith(
        "arn:aws:sagemaker:us-east-2:123456789012:cluster/"
    )
    assert config["alb"]["enabled"] is True and config["alb"]["serviceAccount"]["create"] is True
    assert config["keda"]["auth"]["aws"]["irsa"]["enabled"] is True


def test_trust_policies_name_the_exact_service_accounts(dev):
    assert subjects(trust(dev, "inference-operator-execution-role")) == [
        "system:serviceaccount:hyperpod-inference-system:hyperpod-inference-controller-manager"
    ]
    services = [
        s["Principal"].get("Service") for s in trust(dev, "inference-operator-execution-role")
    ]
    assert ["sagemaker.amazonaws.com"] in services
    expected = {
        "inference-operator-alb-role": "hyperpod-inference-system:aws-load-balancer-controller",
        "inference-operator-keda-role": "hyperpod-inference-system:keda-operator",
        "inference-operator-s3-csi-role": "kube-system:s3-csi-driver-sa",
        "inference-operator-fsx-csi-role": "kube-system:fsx-csi-controller-sa",
    }
    for role, sa in expected.items():
        assert subjects(trust(dev, role)) == [f"system:serviceaccount:{sa}"], role


def test_execution_role_name_prefix_the_chart_requires(dev):
    role = dev.named("inference-operator-execution-role")
    assert role.inputs["namePrefix"].startswith("SageMakerHyperPodInference")


def test_no_wildcard_resources_but_cloudwatch_metric_reads(dev):
    for name in (
        "inference-operator-execution-policy",
        "inference-operator-keda-policy",
        "inference-operator-s3-csi-policy",
    ):
        for s in json.loads(dev.named(name).inputs["policy"])["Statement"]:
            if s["Resource"] == ["*"]:
                # CloudWatch metric reads support no resource-level permissions.
                assert all(a.startswith("cloudwatch:") for a in s["Action"]), name
            else:
                assert all(r.startswith("arn:aws:") for r in s["Resource"]), name


def test_keda_queries_only_the_stacks_prometheus(dev):
    (amp,) = dev.of_type("aws:amp/workspace:Workspace")
    statements = json.loads(dev.named("inference-operator-keda-policy").inputs["policy"])[
        "Statement"
    ]
    aps = next(s for s in statements if s["Action"][0].startswith("aps:"))
    assert aps["Resource"] == [f"arn:aws:aps:us-east-2:123456789012:workspace/{amp.id}"]


def test_the_alb_policy_is_the_vendored_file_narrowed_to_the_stack_s_vpc(dev):
    """The statements deployed are in the plan (resources.json, the gate, the scanners): the
    pinned upstream file with its unconditioned writes narrowed (specs/alb_controller/), not a
    placeholder filled in at deploy time."""
    from specs.alb_controller.narrowing import Scope, moved, narrowed
    from specs.alb_controller.upstream import upstream_policy

    vpc = dev.named("network-vpc")
    vpc_arn = f"arn:aws:ec2:us-east-2:123456789012:vpc/{vpc.id}"
    scope = Scope(
        "aws", vpc_arn, (("hyperpod-dpd:project", "hyperpod-dpd"), ("hyperpod-dpd:stack", "dev"))
    )
    policy = json.loads(dev.named("inference-operator-alb-controller").inputs["policy"])
    assert policy["Statement"] and policy == narrowed(upstream_policy(), scope)
    # Its target registration: the controller role's inline policy (no room in the managed one).
    targets = dev.named("inference-operator-alb-controller-targets")
    assert json.loads(targets.inputs["policy"]) == moved(upstream_policy(), scope)
    assert targets.inputs["role"] == dev.named("inference-operator-alb-role").id
    rules = [s for s in policy["Statement"] if "ec2:AuthorizeSecurityGroupIngress" in s["Action"]]
    assert rules and all("Condition" in s for s in rules)


def test_the_controller_cannot_touch_the_traffic_split_but_its_targets():
    """The traffic split's load balancer and listener are Pulumi's: the controller's role may not
    change them (they carry no elbv2.k8s.aws/cluster tag), only register the routers in their
    target groups (the TargetGroupBindings)."""
    from tests.conftest import canary_raw
    from tests.security.iam import Request, allows

    canary = run_stack(canary_raw(), stack="canary")
    managed = json.loads(canary.named("inference-operator-alb-controller").inputs["policy"])
    inline = json.loads(canary.named("inference-operator-alb-controller-targets").inputs["policy"])
    policy = {**managed, "Statement": managed["Statement"] + inline["Statement"]}
    listener, alb = canary.named("traffic-listener"), canary.named("traffic-alb")
    tags = {f"aws:ResourceTag/{k}": v for k, v in listener.inputs["tags"].items()}
    assert not any("elbv2.k8s.aws" in k for k in tags)
    elb = "elasticloadbalancing:"
    for action in ("ModifyListener", "DeleteListener", "CreateRule", "AddListenerCertificates"):
        assert not allows(policy, Request(f"{elb}{action}", listener.id, tags)), action
    assert not allows(policy, Request(f"{elb}CreateListener", alb.id, tags))
    for group in canary.of_type("aws:lb/targetGroup:TargetGroup"):
        group_tags = {f"aws:ResourceTag/{k}": v for k, v in group.inputs["tags"].items()}
        assert allows(policy, Request(f"{elb}RegisterTargets", group.id, group_tags)), group.name
        # ...and no other stack's: a prod split in the same account.
        prod = {**group_tags, "aws:ResourceTag/hyperpod-dpd:stack": "prod"}
        assert not allows(policy, Request(f"{elb}RegisterTargets", group.id, prod)), group.name


def test_the_controller_may_create_internal_load_balancers_only(dev):
    """The operator's own load balancer of each endpoint forwards to the router, which asks for
    no key: the controller's role may not make it internet-facing (specs/alb_controller/
    scheme.py), whatever the Ingress asks; internal ones it still creates."""
    import json

    from tests.security.iam import Request, allows

    internal_only = dev.named("inference-operator-alb-internal-only")
    assert internal_only.inputs["role"] == dev.named("inference-operator-alb-role").id
    # Both of the role's policies, as IAM evaluates them together.
    role = {"Statement": [
        *json.loads(dev.named("inference-operator-alb-controller").inputs["policy"])["Statement"],
        *json.loads(internal_only.inputs["policy"])["Statement"],
    ]}  # fmt: skip
    arn = "arn:aws:elasticloadbalancing:us-east-2:111122223333:loadbalancer/app/k8s-x/0123"
    tagged = {"aws:RequestTag/elbv2.k8s.aws/cluster": "c"}
    create = "elasticloadbalancing:CreateLoadBalancer"
    scheme = "elasticloadbalancing:Scheme"
    assert allows(role, Request(create, arn, {**tagged, scheme: "internal"}))
    assert not allows(role, Request(create, arn, {**tagged, scheme: "internet-facing"}))
    assert not allows(role, Request(create, arn, tagged))  # no scheme sent: denied as well


@pytest.mark.parametrize(
    ("operator", "addon", "key", "fragment"),
    [
        (
            "3.1",
            "v1.2.1-eksbuild.1",
            "inferenceOperator.version",
            "3.2 or newer with endpoint.mode dpd",
        ),
        ("2.9", "v1.2.1-eksbuild.1", "inferenceOperator.version", "a known operator version"),
        (
            "3.3",
            "v1.9.9-eksbuild.1",
            "inferenceOperator.addonVersion",
            "an add-on version of the version table",
        ),
        (
            "3.3",
            "v1.3.0-eksbuild.1",
            "inferenceOperator.addonVersion",
            "v1.4.0-eksbuild.1, the add-on that carries operator 3.3 (this one carries 3.2",
        ),
    ],
)
def test_version_gate(operator, addon, key, fragment):
    raw = edit(
        stack_raw("dev"), f"{NS}:inferenceOperator", {"version": operator, "addonVersion": addon}
    )
    with pytest.raises(ConfigError) as info:
        parse_settings(raw)
    (problem,) = info.value.problems
    assert problem.key == f"{NS}:{key}" and fragment in problem.allowed


def test_operator_3_1_is_fine_for_colocated_endpoints():
    raw = edit(
        stack_raw("dev"),
        f"{NS}:inferenceOperator",
        {"version": "3.1", "addonVersion": "v1.2.1-eksbuild.1"},
    )
    edit(raw, f"{NS}:endpoint.mode", "colocated")
    assert parse_settings(raw).inference_operator.version == "3.1"
