"""The CrossGuard pack: every rule registered, and validate() driven with hand-built args from
the resources the mock engine recorded (PolicyPack itself is never constructed: it blocks)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs

from core.vocabulary import NETWORK_POLICY_TYPE
from policies.pack import build_policies, limits_from, pack_config
from policies.rules import ALL_RULES
from tests.policies.conftest import iec_spec, recorded, set_env


def stack_args(views, config=None) -> StackValidationArgs:
    resources = [
        PolicyResource(v.type, v.props, v.urn, v.name, None, None, None, [], {}) for v in views
    ]
    return StackValidationArgs(resources, config or {})


def run_pack(views, config=None, only=None) -> dict[str, list[tuple[str, str]]]:
    """What each policy reports on `views` (`only`: the names of the policies to run, as a
    `--policy-pack-config` that disables the others runs them; None: all)."""
    reported: dict[str, list[tuple[str, str]]] = {}
    for policy in build_policies():
        if only is not None and policy.name not in only:
            continue
        policy.validate(
            stack_args(views, config),
            lambda message, urn=None, p=policy.name: reported.setdefault(p, []).append(
                (urn, message)
            ),
        )
    return reported


def test_every_rule_is_a_policy_with_its_level():
    policies = {p.name: p for p in build_policies()}
    for rule in ALL_RULES:
        assert policies[rule.name].enforcement_level == EnforcementLevel(rule.enforcement)
    assert policies["hyperpod-dpd-pd-buffer-capacity-advisory"].enforcement_level == (
        EnforcementLevel.ADVISORY
    )
    assert len(policies) == len(ALL_RULES) + 2  # + the advisory companion, + preview-unchecked
    assert policies["hyperpod-dpd-preview-unchecked"].enforcement_level == EnforcementLevel.ADVISORY


def test_dev_and_prod_pass_the_pack():
    assert run_pack(recorded("dev")) == {}
    assert run_pack(recorded("prod")) == {}


def test_broken_endpoint_is_reported_by_the_right_policies():
    views = recorded("dev")
    set_env(views, "PYTHONHASHSEED")
    iec_spec(views)["pdSpec"]["routingThreshold"] = 0
    reported = run_pack(views)
    assert sorted(reported) == ["hyperpod-dpd-hash-seed", "hyperpod-dpd-routing-threshold"]
    ((urn, _),) = reported["hyperpod-dpd-hash-seed"]
    assert urn.endswith("::endpoint-iec")


def test_assumed_load_goes_to_the_advisory_companion():
    views = recorded("dev")
    set_env(views, "PD_BUFFER_SIZE", str(6 * 2**30))
    assert list(run_pack(views)) == ["hyperpod-dpd-pd-buffer-capacity-advisory"]


def test_config_limits_reach_the_rules():
    views = recorded("dev")
    iec_spec(views)["pdSpec"]["routingThreshold"] = 300
    assert run_pack(views) == {}
    assert "hyperpod-dpd-routing-threshold" in run_pack(views, {"minRoutingThreshold": 512})
    assert limits_from({"extraDpdImages": ["a"]}).extra_dpd_images == ("a",)


def test_pack_config_carries_stack_enforcement():
    config = pack_config({"hyperpod-dpd-shm-volume": "mandatory"}, advisories_mandatory=False)
    assert config["hyperpod-dpd-shm-volume"] == {"enforcementLevel": "mandatory"}
    assert config["hyperpod-dpd-model-size"] == {"enforcementLevel": "advisory"}
    strict = pack_config({}, advisories_mandatory=True)
    unchecked = strict.pop("hyperpod-dpd-preview-unchecked")
    assert {c["enforcementLevel"] for c in strict.values()} == {"mandatory"}
    # What a first preview cannot know never blocks it, even in a strict stack.
    assert unchecked == {"enforcementLevel": "advisory"}


def test_a_fix_the_pack_reports_names_the_stack_previewed():
    """`pulumi preview --policy-pack` on the dev stack: the fix's `pulumi config set` acts on dev,
    not on whichever stack is selected (the URNs say which stack is previewed)."""
    views = [v for v in recorded("dev") if v.type != NETWORK_POLICY_TYPE]
    messages = [m for _, m in run_pack(views)["hyperpod-dpd-pod-ingress"]]
    assert messages and all(
        "pulumi config set --stack dev --path 'hyperpod-dpd:networkPolicy.enabled' true" in m
        for m in messages
    )
