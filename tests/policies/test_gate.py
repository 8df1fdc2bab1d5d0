"""The gate: every rule once, before the first registration; what it judged is what is registered."""

from __future__ import annotations

import dataclasses
import re

import pulumi
import pytest
from pulumi.runtime import mocks as pulumi_mocks

from core import vocabulary as v
from core.refs import is_ref, refs_in
from hyperpod_dpd.cli import main
from hyperpod_dpd.plan.wire_values import SECRET
from policies.gate import PolicyStop, judge, views
from policies.rules import ResourceView, evaluate
from policies.rules import views as rule_views
from settings import parse_settings
from specs.desired import desired_state
from tests.conftest import canary_raw, edit, run_stack, stack_raw, write_project
from tests.support.pinned_images import pinned

NS = "hyperpod-dpd"
TOKEN = "hf_" + "x" * 34

BROKEN = {
    "g6e decode group": (
        "instanceGroups.decode.instanceType",
        "ml.g6e.48xlarge",
        "hyperpod-dpd-instance-type",
        "hyperpod-dpd:instanceGroups.decode.instanceType",
    ),
    "routing threshold 100": (
        "endpoint.routingThreshold",
        100,
        "hyperpod-dpd-routing-threshold",
        "hyperpod-dpd:endpoint.routingThreshold",
    ),
    "random hash seed": (
        "endpoint.environmentVariables",
        {"PYTHONHASHSEED": "random"},
        "hyperpod-dpd-hash-seed",
        "hyperpod-dpd:endpoint.environmentVariables",
    ),
    "plaintext token": (
        "endpoint.environmentVariables",
        {"HF_TOKEN": TOKEN},
        "hyperpod-dpd-hf-token",
        "hyperpod-dpd:endpoint.environmentVariables.HF_TOKEN",
    ),
}


@pytest.fixture
def registrations(monkeypatch):
    """Every RegisterResource call the SDK's mock monitor receives (the stack itself aside)."""
    calls: list[str] = []
    original = pulumi_mocks.MockMonitor.RegisterResource

    def counting(self, request):
        if request.type != "pulumi:pulumi:Stack":
            calls.append(f"{request.type}::{request.name}")
        return original(self, request)

    monkeypatch.setattr(pulumi_mocks.MockMonitor, "RegisterResource", counting)
    return calls


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_mandatory_violation_stops_the_program_before_any_registration(case, registrations):
    key, value, rule, named_key = BROKEN[case]
    raw = edit(stack_raw("dev"), f"{NS}:{key}", value)
    with pytest.raises(PolicyStop) as stop:
        run_stack(raw)
    assert registrations == []
    assert isinstance(stop.value, pulumi.RunError)  # `pulumi up` prints it without a traceback
    assert {v.policy for v in stop.value.violations} == {rule}
    text = str(stop.value)
    assert text.startswith("1 mandatory policy violation(s); nothing was created:\n") or (
        text.startswith("2 mandatory policy violation(s); nothing was created:\n")
    )
    assert f"  {rule}: " in text and named_key in text
    assert TOKEN not in text  # the report never repeats a secret's value


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_plan_exits_1_names_rule_and_key_and_counts_0_registrations(case, tmp_path, capsys):
    key, value, rule, named_key = BROKEN[case]
    project = write_project(tmp_path / "p", edit(stack_raw("dev"), f"{NS}:{key}", value))
    code = main(
        ["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(tmp_path / "plan")]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "0 resources were registered before the stop" in out
    assert f"{rule}: " in out and named_key in out


def test_a_rule_made_advisory_by_the_stack_does_not_stop_it(tmp_path, capsys):
    raw = edit(pinned(stack_raw("dev")), f"{NS}:instanceGroups.decode.instanceType",
               "ml.g6e.48xlarge")  # fmt: skip
    edit(raw, f"{NS}:policy", {"enforcement": {"hyperpod-dpd-instance-type": "advisory"}})
    project = write_project(tmp_path / "p", raw)
    code = main(
        ["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(tmp_path / "plan")]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Policy violations, advisory (2):" in out  # the decode group and the endpoint
    assert "hyperpod-dpd-instance-type: hyperpod-cluster: instance group decode" in out
    assert "Policy violations, mandatory" not in out


def test_advisories_mandatory_stops_on_an_advisory(registrations):
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.prefill.replicas", 2)
    edit(raw, f"{NS}:instanceGroups.prefill.instanceCount", 2)
    run_stack(raw, fresh=True)  # routing-strategy is advisory: the stack deploys
    assert len(registrations) > 100
    registrations.clear()
    edit(raw, f"{NS}:policy", {"advisoriesMandatory": True})
    with pytest.raises(PolicyStop, match="hyperpod-dpd-routing-strategy"):
        run_stack(raw)
    assert registrations == []


# --- The gate judges what the components register --------------------------------------------


def _template(text: str) -> re.Pattern:
    """A placeholder stands for any value: '${a.arn}/x/*' -> r'.+?/x/\\*'."""
    parts = re.split(r"(\$\{[^}]+\})", text)
    return re.compile("".join(".+?" if is_ref(p) else re.escape(p) for p in parts), re.S)


def _matches(judged, registered, path="") -> list[str]:
    # A value made of a secret output (a generated key) reaches the engine as a secret, which
    # the recorded inputs show as "[secret]": it stands for the placeholders, as they do.
    if registered == SECRET and any(refs_in(judged)):
        return []
    if isinstance(judged, str) and any(refs_in(judged)):
        if is_ref(judged):
            return [] if registered is not None else [f"{path}: nothing registered"]
        ok = isinstance(registered, str) and _template(judged).fullmatch(registered)
        return [] if ok else [f"{path}: {registered!r} is not {judged!r}"]
    if isinstance(judged, dict):
        if not isinstance(registered, dict) or set(judged) != set(registered):
            return [f"{path}: keys {sorted(judged)} != {sorted(registered or {})}"]
        return [p for k in judged for p in _matches(judged[k], registered[k], f"{path}.{k}")]
    if isinstance(judged, list):
        if not isinstance(registered, list) or len(judged) != len(registered):
            return [f"{path}: {registered!r} is not {judged!r}"]
        return [p for i, j in enumerate(judged) for p in _matches(j, registered[i], f"{path}[{i}]")]
    return [] if judged == registered else [f"{path}: {registered!r} != {judged!r}"]


CASES = {
    "dev": ("dev", []),
    "prod": ("prod", []),
    "canary: two endpoints behind a weighted split": ("canary", []),
    "colocated, no observability, placement group, named bucket, manual staging": (
        "dev",
        [
            ("endpoint.mode", "colocated"),
            ("observability.enabled", False),
            ("network.placementGroup", True),
            ("checkpoint.bucketName", "my-models"),
            ("checkpoint.source", "s3://other-bucket/models/llama"),
            ("checkpoint.staging", "manual"),
        ],
    ),
    "advisory findings": ("dev", [("endpoint.prefill.replicas", 2)]),
    "numbers set again in role args and environmentVariables": (
        "dev",
        [
            ("endpoint.prefill.args", ["--gpu-memory-utilization", "0.8"]),
            ("endpoint.decode.args", ["--max-model-len=12288"]),
            ("endpoint.environmentVariables", {"PD_BUFFER_SIZE": "4294967296"}),
        ],
    ),
}


def _case(name):
    stack, edits = CASES[name]
    raw = stack_raw(stack)
    for key, value in edits:
        edit(raw, f"{NS}:{key}", value)
    if name == "advisory findings":
        edit(raw, f"{NS}:instanceGroups.prefill.instanceCount", 2)
    return stack, raw


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_judged_resource_is_registered_with_the_judged_inputs(name):
    stack, raw = _case(name)
    desired = desired_state(parse_settings(raw), "hyperpod-dpd", stack)
    run = run_stack(raw, stack=stack)
    registered = {r.urn: r for r in run.resources}  # the engine's URNs (test_engine.py)
    for view in views(desired):
        assert view.urn in registered, f"{view.name} ({view.urn}) was judged, never registered"
        assert _matches(view.props, registered[view.urn].inputs, view.name) == []


# The types the rules select resources by (policies/rules/*.py); hf-token reads every resource,
# and the gate gives it the ones that can carry user input (endpoint, staging Job and Secret).
READ_BY_TYPE = {
    v.IEC_TYPE,
    v.HYPERPOD_CLUSTER_TYPE,
    v.SUBNET_TYPE,
    v.SECURITY_GROUP_TYPE,
    v.SG_INGRESS_TYPE,
    v.SG_EGRESS_TYPE,
    v.EKS_CLUSTER_TYPE,
    v.BUCKET_TYPE,
    v.BUCKET_PUBLIC_ACCESS_BLOCK_TYPE,
    v.BUCKET_ENCRYPTION_TYPE,
    v.BUCKET_POLICY_TYPE,
    v.ROLE_POLICY_TYPE,
    v.IAM_POLICY_TYPE,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gate_judges_every_registered_resource_a_rule_reads(name):
    stack, raw = _case(name)
    gate = views(desired_state(parse_settings(raw), "hyperpod-dpd", stack))
    judged = {v.urn for v in gate}
    run = run_stack(raw, stack=stack)
    types = READ_BY_TYPE
    missed = [r.name for r in run.resources if r.type in types and r.urn not in judged]
    assert missed == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rules_find_the_same_on_the_registered_resources(name):
    """Defence in depth agrees: the pack's view (registered inputs) finds what the gate found."""
    stack, raw = _case(name)
    settings = parse_settings(raw)
    gate = judge(desired_state(settings, "hyperpod-dpd", stack))
    run = run_stack(raw, stack=stack)
    recorded = [ResourceView(r.type, r.name, r.urn, r.inputs) for r in run.resources]
    policy = settings.policy
    found = evaluate(
        recorded,
        enforcement=policy.enforcement,
        advisories_mandatory=policy.advisories_mandatory,
    )

    def by_name(violations, mask=lambda m: m):
        return [
            (v.policy, v.enforcement, v.urn.rsplit("::", 1)[-1], mask(v.message))
            for v in violations
        ]

    if not _overridden(name):
        assert by_name(found) == by_name(gate)
    else:
        # Only the settings know that role args or environmentVariables set a number again: the
        # gate's fix names that place (in that place's unit), the pack's the endpoint's own key.
        # What they find is the same.
        assert by_name(found, _mask_settings) == by_name(gate, _mask_settings)
        assert by_name(found) != by_name(gate)


def _overridden(name: str) -> bool:
    return any(key.endswith(("args", "environmentVariables")) for key, _ in CASES[name][1])


def _mask_settings(message: str) -> str:
    """A message with the keys it names and the values it sets masked."""
    message = re.sub(r'(?:--[a-z-]+ in )?hyperpod-dpd:[^\s,;()]+(?: to ("[^"]*"|[^\s,;()]+))?',
                     "<setting>", message)  # fmt: skip
    return message


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gate_reads_typed_numbers_the_pack_reads_back_alike(name):
    """The gate's rules read the endpoint's numbers typed, from the settings; the pack reads
    them back from the deployed manifest's text. Both readings must be the same numbers."""
    stack, raw = _case(name)
    gate = views(desired_state(parse_settings(raw), "hyperpod-dpd", stack))
    iecs = [view for view in gate if view.type == v.IEC_TYPE]
    assert iecs
    for iec in iecs:
        assert iec.facts is not None
        deployed = dataclasses.replace(iec, facts=None)
        assert rule_views.worker_facts(deployed) == rule_views.worker_facts(iec) == iec.facts


@pytest.mark.parametrize(
    ("setting", "value", "policy", "named"),
    [("image", "example.com/vllm:1", "hyperpod-dpd-image", "endpoints.candidate.image"),
     ("image", "lmcache/vllm-openai:v0.4.4", "hyperpod-dpd-image-known-issues",
      "endpoints.candidate.image"),
     ("model", "llama-3.1-8b", "hyperpod-dpd-model-size", "endpoints.candidate.mode")],
)  # fmt: skip
def test_a_fix_for_one_of_several_endpoints_names_that_endpoints_keys(
    setting, value, policy, named
):
    """In a stack of several endpoints (Pulumi.canary.yaml) there is no hyperpod-dpd:endpoint
    to set: a fix names hyperpod-dpd:endpoints.<key>.*."""
    raw = edit(stack_raw("canary"), f"{NS}:endpoints.candidate.{setting}", value)
    if setting == "model":
        edit(raw, f"{NS}:endpoints.baseline.model", value)
        edit(raw, f"{NS}:checkpoint.source", "hf://meta-llama/Llama-3.1-8B-Instruct")
    found = [x for x in judge(desired_state(parse_settings(raw), NS, "canary"))
             if x.policy == policy]  # fmt: skip
    assert found, policy
    for violation in found:
        assert f"{NS}:{named}" in violation.message
        assert f"{NS}:endpoint." not in violation.message


def test_the_instance_type_fix_of_a_dpd_endpoint_retypes_only_dpd_groups():
    """Beside a colocated baseline, a DPD candidate on a non-DPD type is fixed on its prefill or
    decode groups: the colocated group's type is not the candidate's to change."""
    raw = canary_raw()
    edit(raw, f"{NS}:instanceGroups.colocated.instanceType", "ml.g6e.48xlarge")
    edit(raw, f"{NS}:instanceGroups.decode.instanceType", "ml.g6e.48xlarge")
    [on_iec] = [x for x in judge(desired_state(parse_settings(raw), NS, "canary"))
                if x.policy == "hyperpod-dpd-instance-type" and x.urn.endswith("-iec")]  # fmt: skip
    assert f"set {NS}:instanceGroups.decode.instanceType to ml.p5.48xlarge" in on_iec.message
    assert "instanceGroups.colocated" not in on_iec.message


def test_a_colocated_endpoints_tp_fix_names_its_own_tensor_parallel_size():
    """A colocated endpoint sets its TP with tensorParallelSize (its decode section is for
    overrides): the fix raises that key, in the gate and in the pack alike."""
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.baseline.tensorParallelSize", 2)
    edit(raw, f"{NS}:endpoints.baseline.maxModelLen", 65536)
    desired = desired_state(parse_settings(raw), NS, "canary")
    [gate] = [x for x in judge(desired) if x.policy == "hyperpod-dpd-gpu-memory"]
    assert f"raise {NS}:endpoints.baseline.tensorParallelSize to 4" in gate.message  # the smallest
    [iec] = [x for x in views(desired) if x.name == "endpoint-baseline-iec"]
    assert rule_views.setting(dataclasses.replace(iec, facts=None), "tensor_parallel_size",
                              "decode") == f"{NS}:endpoints.baseline.tensorParallelSize"  # fmt: skip
