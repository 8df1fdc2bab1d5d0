"""The DPD canary as the plan shows it: a colocated baseline and a DPD candidate behind one
weighted URL, called by a name of the user's with a generated API key; shifting and rolling back
change the routing only, and so does rotating the key."""

from __future__ import annotations

import json
import shutil

import pytest

from core.vocabulary import BENCHMARK_NAMESPACE
from hyperpod_dpd.diff.compare import diff_plans, load_plan
from hyperpod_dpd.plan.fakes import FakeCloud
from hyperpod_dpd.plan.planner import make_plan
from hyperpod_dpd.plan.wire_values import SECRET
from tests.conftest import ROOT
from tests.support.pinned_images import beside_tags

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
    (rule,) = plan.run.of_type("aws:lb/listenerRule:ListenerRule")
    (action,) = rule.inputs["actions"]
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
DOMAIN = "    domainName: llm.internal.example.com\n    hostedZoneId: Z0123456789ABCDEFGHIJ\n"
# The canary's listener without a certificate (and so without the name it covers).
NO_CERTIFICATE = ((CERTIFICATE, "# no certificate: " + CERTIFICATE), (DOMAIN, ""))


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
    plan, out = _plan(tmp_path, "plain", *NO_CERTIFICATE)
    (listener,) = plan.run.of_type("aws:lb/listener:Listener")
    assert (listener.inputs["protocol"], listener.inputs["port"]) == ("HTTP", 80)
    assert "sslPolicy" not in listener.inputs
    # No name of the user's: the load balancer's own, over HTTP; the key is checked all the same.
    url = plan.run.outputs["trafficUrl"]
    assert url.startswith("http://internal-traffic-alb-") and ".elb.amazonaws.com/" in url
    assert not plan.run.of_type("aws:route53/record:Record")
    assert plan.run.of_type("aws:lb/listenerRule:ListenerRule")
    summary = (out / "summary.md").read_text()
    assert "| clients call | the load balancer's own name over plain HTTP" in summary
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
    # The listener rule that forwards, and at most the alert rules whose rollback lines name
    # the weights (an update of the workspace's rule group): both in place, nothing replaced.
    changed = {c.name: c.replace for c in d.changed}
    assert "traffic-forward" in changed and set(changed) <= {
        "traffic-forward",
        "observability-rules",
    }
    assert all(replace == [] for replace in changed.values())
    assert not [m for m in d.manifests if m.startswith("inferenceendpointconfig.")]


def test_only_requests_with_the_generated_key_are_forwarded_the_rest_get_401(canary):
    """The listener's own answer is 401; its one rule forwards, by weight, what carries
    `Authorization: Bearer <key>` of a generated key; the newest key is a stack output and a
    Secret in the endpoints' namespace, and neither the plan nor its files show it."""
    plan, out = canary
    (listener,) = plan.run.of_type("aws:lb/listener:Listener")
    (refusal,) = listener.inputs["defaultActions"]
    assert refusal["type"] == "fixed-response"
    assert refusal["fixedResponse"]["statusCode"] == "401"
    assert "Authorization: Bearer" in json.loads(refusal["fixedResponse"]["messageBody"])[
        "error"]["message"]  # fmt: skip
    (rule,) = plan.run.of_type("aws:lb/listenerRule:ListenerRule")
    assert rule.inputs["listenerArn"] == listener.id and rule.inputs["priority"] == 1
    (condition,) = rule.inputs["conditions"]
    assert condition == {"httpHeader": {"httpHeaderName": "Authorization", "values": [SECRET]}}
    (key,) = plan.run.of_type("random:index/randomPassword:RandomPassword")
    assert (key.name, key.inputs) == (
        "traffic-api-key-first", {"length": 48, "special": False, "upper": False})  # fmt: skip
    (secret,) = plan.run.of_type("kubernetes:core/v1:Secret")
    assert secret.inputs["metadata"] == {
        "name": "hyperpod-dpd-traffic-api-key", "namespace": BENCHMARK_NAMESPACE}  # fmt: skip
    assert secret.inputs["stringData"] == SECRET
    assert plan.run.outputs["trafficApiKey"] == SECRET
    # The offline engine's stand-in of the generated key appears in no file of the plan.
    _, state = FakeCloud("us-east-2").create(key.type, key.name, key.inputs)
    fake = state["result"]
    assert len(fake) == 48 and fake not in plan.run.outputs.values()
    assert not [p.name for p in out.rglob("*") if p.is_file() and fake in p.read_text()]


def test_a_second_key_name_adds_a_key_beside_the_first_and_restarts_nothing(canary, tmp_path):
    """Rotation: a new name adds a generated key the rule takes beside the old one, and the
    newest goes to the Secret; no endpoint changes (no pod restarts)."""
    _, base = canary
    plan, head = _plan(tmp_path, "rotate", ("    allowedCidrs: [10.20.0.0/16]",
                       "    allowedCidrs: [10.20.0.0/16]\n    apiKeyNames: [first, 2027-01]"))  # fmt: skip
    (rule,) = plan.run.of_type("aws:lb/listenerRule:ListenerRule")
    assert rule.inputs["conditions"][0]["httpHeader"]["values"] == [SECRET, SECRET]
    d = diff_plans(load_plan(base), load_plan(head))
    assert [c["name"] for c in d.added] == ["traffic-api-key-2027-01"] and not d.removed
    changed = {c.name: c.replace for c in d.changed}
    # The Secret takes the new key too, which a plan cannot show (both sides read [secret]).
    assert "traffic-forward" in changed
    assert set(changed) <= {"traffic-forward", f"traffic-key-secret-{BENCHMARK_NAMESPACE}"}
    assert all(replace == [] for replace in changed.values())
    assert not [m for m in d.manifests if m.startswith("inferenceendpointconfig.")]


def test_clients_call_the_split_by_the_users_name_in_their_zone(canary):
    """trafficListener.domainName: an alias record in the user's private zone to the load
    balancer, the zone associated with the stack's VPC, and trafficUrl on that name."""
    plan, out = canary
    (alb,) = plan.run.of_type("aws:lb/loadBalancer:LoadBalancer")
    (record,) = plan.run.of_type("aws:route53/record:Record")
    assert record.inputs["name"] == "llm.internal.example.com"
    assert record.inputs["type"] == "A" and record.inputs["zoneId"] == "Z0123456789ABCDEFGHIJ"
    (alias,) = record.inputs["aliases"]
    state = FakeCloud("us-east-2").create(alb.type, alb.name, alb.inputs)[1]
    assert (alias["name"], alias["zoneId"]) == (state["dnsName"], state["zoneId"])
    (association,) = plan.run.of_type("aws:route53/zoneAssociation:ZoneAssociation")
    assert association.inputs == {
        "zoneId": "Z0123456789ABCDEFGHIJ", "vpcId": plan.run.named("network-vpc").id}  # fmt: skip
    url = "https://llm.internal.example.com/v1/chat/completions"
    assert plan.run.outputs["trafficUrl"] == url
    assert f'| trafficUrl | `"{url}"` |' in (out / "summary.md").read_text()


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
