"""The operator's caches as settings (settings/model_cache.py): `endpoints.<key>.cache` is
refused, naming the key, where the operator has no such field (3.2), where a node has no NVMe
instance store, and where the cached weights outgrow it."""

from __future__ import annotations

from core.aws.ec2_instances import INSTANCE_FACTS
from core.versions import OPERATOR_ADDON_VERSIONS
from settings import parse_settings
from settings.model_cache import check_model_cache
from tests.conftest import canary_raw, edit, with_cache
from tests.settings.problems import followed, only_problem, problems_of

NS = "hyperpod-dpd"


def test_a_cache_on_operator_3_2_is_refused_naming_the_key_and_the_fix_removes_it():
    raw = with_cache(canary_raw(), weights=True, image=True)
    edit(
        raw,
        f"{NS}:inferenceOperator",
        {"version": "3.2", "addonVersion": OPERATOR_ADDON_VERSIONS["3.2"]},
    )
    messages = problems_of(raw)
    assert [m.split(":")[1].split(" ")[0] for m in messages] == [
        "endpoints.candidate.cache.weights",
        "endpoints.candidate.cache.image",
    ]
    assert "from 3.3" in messages[0]
    fixed = followed(raw, messages[0])
    assert "cache.weights" not in " ".join(problems_of(fixed))


def test_a_cache_on_an_ebs_only_instance_type_is_refused():
    raw = with_cache(canary_raw(), weights=True)
    ebs_only = INSTANCE_FACTS["ml.m5.4xlarge"]  # moto: no InstanceStorageInfo
    assert (ebs_only.instance_store_gb, ebs_only.instance_store_nvme) == (0, False)
    s = parse_settings(raw)
    facts = {**INSTANCE_FACTS, "ml.p5.48xlarge": ebs_only}
    [problem] = check_model_cache(s.entries(), s.inference_operator, s.instance_groups, facts)
    text = problem.render()
    assert text.startswith("hyperpod-dpd:endpoints.candidate.cache.weights: got true")
    assert "EBS-only instances are not supported" in text


def test_the_real_p5_has_room_for_a_cached_70b_and_the_plan_accepts_it():
    f = INSTANCE_FACTS["ml.p5.48xlarge"]
    assert (f.instance_store_gb, f.instance_store_nvme) == (30400, True)  # 8 x 3800 GB NVMe
    s = parse_settings(with_cache(canary_raw(), weights=True))
    assert s.endpoints["candidate"].cache.weights


def test_cached_endpoints_sharing_a_group_count_together_against_its_instance_store():
    raw = with_cache(with_cache(canary_raw(), weights=True), "baseline", weights=True)
    s = parse_settings(raw)
    # A p5 whose instance store holds one 70B checkpoint (141 GB) but not two: each deployment
    # keeps its own cache directory.
    small = INSTANCE_FACTS["ml.p5.48xlarge"]._replace(instance_store_gb=200)
    facts = {**INSTANCE_FACTS, "ml.p5.48xlarge": small}
    assert check_model_cache(s.entries(), s.inference_operator, s.instance_groups, facts) == []
    # ...until both run on the same group: the canary's colocated group, pinned to both.
    raw = with_cache(with_cache(canary_raw(), "baseline", weights=True), weights=True)
    edit(raw, f"{NS}:endpoints.candidate.mode", "colocated")
    edit(raw, f"{NS}:endpoints.candidate.replicas", 1)
    edit(raw, f"{NS}:endpoints.baseline.replicas", 1)
    s = parse_settings(raw)
    [problem] = check_model_cache(s.entries(), s.inference_operator, s.instance_groups, facts)
    text = problem.render()
    assert "hyperpod-dpd:endpoints.candidate.cache.weights" in text
    assert "instance group colocated" in text and "200 GB NVMe" in text and "141 GB" in text


def test_an_unknown_cache_key_is_refused():
    raw = with_cache(canary_raw(), weight=True)
    assert "endpoints.candidate.cache.weight" in only_problem(raw)
