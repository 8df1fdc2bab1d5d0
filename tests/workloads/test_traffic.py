"""The DPD canary as the plan shows it: a colocated baseline and a DPD candidate behind one
weighted URL; shifting and rolling back change the routing only."""

from __future__ import annotations

import shutil

import pytest

from hyperpod_dpd.diff.compare import diff_plans, load_plan
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.pinned_images import beside_tags

IEC = "kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig"


def _plan(tmp_path, name, *replacements):
    project = tmp_path / name
    project.mkdir()
    for file in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / file, project / file)
    text = (ROOT / "Pulumi.canary.yaml").read_text()
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    (project / "Pulumi.canary.yaml").write_text(text)
    out = tmp_path / f"{name}-plan"
    plan = make_plan(project, "canary", out)
    return plan, out


@pytest.fixture(scope="module")
def canary(tmp_path_factory):
    return _plan(tmp_path_factory.mktemp("canary"), "base")


def test_the_canary_plans_two_endpoints_behind_one_weighted_listener(canary):
    plan, _ = canary
    assert plan.exit_code == 0 and not beside_tags(plan.violations)
    iecs = plan.run.of_type(IEC)
    assert sorted(r.inputs["metadata"]["name"] for r in iecs) == ["baseline", "candidate"]
    (listener,) = plan.run.of_type("aws:lb/listener:Listener")
    (action,) = listener.inputs["defaultActions"]
    groups = {r.urn: r.name for r in plan.run.of_type("aws:lb/targetGroup:TargetGroup")}
    weights = {groups[g["arn"]] if g["arn"] in groups else g["arn"]: g["weight"]
               for g in action["forward"]["targetGroups"]}  # fmt: skip
    assert sorted(weights.values()) == [5, 95]
    (alb,) = plan.run.of_type("aws:lb/loadBalancer:LoadBalancer")
    assert alb.inputs["internal"] is True
    assert plan.run.outputs["trafficWeights"] == {"baseline": 95, "candidate": 5}
    assert plan.run.outputs["trafficUrl"].endswith("/v1/chat/completions")


def test_each_target_group_is_bound_to_its_endpoints_router(canary):
    plan, _ = canary
    bindings = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]
        for r in plan.run.of_type("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding")
    }
    assert {k: v["serviceRef"] for k, v in bindings.items()} == {
        "traffic-baseline": {"name": "baseline-inference-routing-service", "port": 443},
        "traffic-candidate": {"name": "candidate-inference-routing-service", "port": 443},
    }
    namespaces = {r.inputs["metadata"]["namespace"]
                  for r in plan.run.of_type("kubernetes:elbv2.k8s.aws/v1beta1:TargetGroupBinding")}  # fmt: skip
    assert namespaces == {"hyperpod-inference-system"}


CERTIFICATE = "certificateArn: arn:aws:acm:us-east-2:111122223333:certificate/0b7e3c3a"


def test_the_entry_point_admits_the_named_clients_and_the_nodes_only(canary):
    """Not the whole VPC: the nodes' group (in-cluster clients) and trafficListener.allowedCidrs,
    on the listener's port alone; the balancer reaches the nodes' group only."""
    plan, _ = canary
    rules = {r.name: r.inputs for r in plan.run.resources if r.name.startswith("traffic-")
             and r.type.startswith("aws:vpc/securityGroup")}  # fmt: skip
    nodes = plan.run.named("nodes-sg").id
    own = plan.run.named("traffic-sg").id
    assert {n: (r.get("cidrIpv4") or r.get("referencedSecurityGroupId"), r["fromPort"],
                r["toPort"]) for n, r in rules.items()} == {
        "traffic-ingress-nodes": (nodes, 443, 443),
        "traffic-ingress-10-20-0-0-16": ("10.20.0.0/16", 443, 443),
        "traffic-egress-routers": (nodes, 0, 65535),
        "traffic-to-routers": (own, 0, 65535),
        "traffic-from-nodes": (own, 443, 443),
    }  # fmt: skip
    assert rules["traffic-to-routers"]["securityGroupId"] == nodes


def test_the_canary_listens_on_https_with_a_modern_policy_and_logs_its_access(canary):
    plan, _ = canary
    (listener,) = plan.run.of_type("aws:lb/listener:Listener")
    assert (listener.inputs["protocol"], listener.inputs["port"]) == ("HTTPS", 443)
    assert listener.inputs["sslPolicy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    assert plan.run.outputs["trafficUrl"].startswith("https://")
    (alb,) = plan.run.of_type("aws:lb/loadBalancer:LoadBalancer")
    bucket = plan.run.named("traffic-logs-bucket")
    assert alb.inputs["accessLogs"] == {"bucket": bucket.id, "prefix": "traffic", "enabled": True}
    encryption = plan.run.named("traffic-logs-encryption").inputs["rules"][0]
    # ALB log delivery takes SSE-S3 buckets only.
    assert encryption["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
    import json

    statements = json.loads(plan.run.named("traffic-logs-tls-only").inputs["policy"])["Statement"]
    # us-east-2 opened before August 2022: its ELB account writes the logs too
    # (tests/security/test_documented_policies.py).
    deny, account, delivery = statements
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert account["Principal"] == {"AWS": "arn:aws:iam::033677994240:root"}
    assert delivery["Principal"] == {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}
    assert delivery["Resource"].endswith("/traffic/AWSLogs/123456789012/*")
    assert delivery["Condition"] == {"StringEquals": {"aws:SourceAccount": "123456789012"}}
    (rule,) = plan.run.named("traffic-logs-lifecycle").inputs["rules"]
    assert rule["expiration"] == {"days": 90}


def test_without_a_certificate_the_listener_is_http_and_the_plan_says_so(tmp_path):
    plan, _ = _plan(tmp_path, "plain", (CERTIFICATE, "# no certificate: " + CERTIFICATE))
    (listener,) = plan.run.of_type("aws:lb/listener:Listener")
    assert (listener.inputs["protocol"], listener.inputs["port"]) == ("HTTP", 80)
    assert "sslPolicy" not in listener.inputs
    (found,) = beside_tags(plan.violations)
    assert (found.policy, found.enforcement) == ("hyperpod-dpd-traffic-tls", "advisory")
    assert "clear text" in found.message and plan.exit_code == 0


@pytest.mark.parametrize(("weights", "label"), [((100, 0), "rollback"), ((50, 50), "shift")])
def test_moving_weights_changes_the_listener_and_no_endpoint(canary, tmp_path, weights, label):
    _, base = canary
    _, head = _plan(
        tmp_path,
        label,
        (
            "    baseline: 95\n    candidate: 5",
            f"    baseline: {weights[0]}\n    candidate: {weights[1]}",
        ),
    )
    d = diff_plans(load_plan(base), load_plan(head))
    assert not d.added and not d.removed
    # The listener, and at most the alert rules whose rollback lines name the weights (an
    # update of the workspace's rule group): both in place, nothing replaced.
    changed = {c.name: c.replace for c in d.changed}
    assert "traffic-listener" in changed and set(changed) <= {
        "traffic-listener",
        "observability-rules",
    }
    assert all(replace == [] for replace in changed.values())
    assert not [m for m in d.manifests if m.startswith("inferenceendpointconfig.")]


def test_the_plan_lists_each_endpoint_with_its_gpus_cost_and_traffic(canary):
    _, out = canary
    summary = (out / "summary.md").read_text()
    assert "| baseline | colocated | colocated | 16-16 | $110.08 | 95% |" in summary
    assert "| candidate | dpd | prefill, decode | 16-16 | $110.08 | 5% |" in summary
    assert "### Endpoint `candidate`" in summary


def test_the_pull_request_comment_lists_the_endpoints_and_the_split(canary, tmp_path):
    from hyperpod_dpd.diff.render import render_markdown

    _, base = canary
    _, head = _plan(tmp_path, "shift", ("    baseline: 95\n    candidate: 5",
                                        "    baseline: 50\n    candidate: 50"))  # fmt: skip
    comment = render_markdown(diff_plans(load_plan(base), load_plan(head)))
    assert "#### Endpoints (" in comment  # named by the head side's label
    assert "| candidate | dpd | prefill, decode | 16-16 | $110.08 | 50% |" in comment
