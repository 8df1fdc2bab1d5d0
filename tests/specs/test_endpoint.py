"""The endpoint spec the stack renders from config: defaults, overrides, modes."""

from __future__ import annotations

import pytest

from core.vllm.vllm_args import flag_value
from settings import parse_settings
from specs.endpoint import (
    ClusterFacts,
    build_endpoint,
    effective_role_args,
    model_name,
    node_resources,
)
from tests.conftest import edit, stack_raw

FACTS = ClusterFacts(model_bucket="models-bucket", az_name="us-east-2b")
NS = "hyperpod-dpd"


def manifest(raw=None):
    return build_endpoint(parse_settings(raw or stack_raw("dev")), FACTS).to_manifest()


def env(m) -> dict[str, str]:
    return {e["name"]: e["value"] for e in m["spec"]["worker"]["environmentVariables"]}


def test_dpd_defaults_follow_the_docs():
    m = manifest()
    assert env(m) == {
        "HF_HOME": "/tmp/hf_home",
        "PD_BUFFER_SIZE": "8589934592",
        "LMCACHE_SAVE_DECODE_CACHE": "False",
        "PYTHONHASHSEED": "0",
        # Given, not asked of the instance metadata service (specs/isolation/instance_metadata.py).
        "AWS_REGION": "us-east-2",
        "AWS_DEFAULT_REGION": "us-east-2",
    }
    pd = m["spec"]["pdSpec"]
    assert pd["routingThreshold"] == 4096
    assert pd["prefillSpec"]["args"] == ["--max-num-seqs", "16", "--enforce-eager"]
    assert pd["decodingSpec"]["args"] == ["--max-num-seqs", "32"]
    assert pd["topologySpec"] == {"sameAZ": True, "availabilityZone": "us-east-2b"}
    assert pd["prefillSpec"]["nodeSelector"] == {"hyperpod-dpd/role": "prefill"}
    assert pd["decodingSpec"]["nodeSelector"] == {"hyperpod-dpd/role": "decode"}
    assert m["spec"]["intelligentRoutingSpec"] == {
        "enabled": True,
        "routingStrategy": "prefixaware",
    }
    assert m["spec"]["kvCacheSpec"] == {"enableL1Cache": True}
    assert m["spec"]["metrics"] == {"enabled": True}
    assert m["spec"]["modelSourceConfig"]["s3Storage"] == {
        "bucketName": "models-bucket",
        "region": "us-east-2",
    }


def test_effective_flags_per_role():
    s = parse_settings(stack_raw("dev"))
    prefill, decode = effective_role_args(s, "prefill"), effective_role_args(s, "decode")
    assert flag_value(prefill, "--tensor-parallel-size") == "8"
    assert flag_value(prefill, "--enforce-eager") == ""
    assert flag_value(decode, "--enforce-eager") is None  # CUDA graphs on the decoder
    assert flag_value(decode, "--gpu-memory-utilization") == "0.75"


def test_user_overrides_env_and_role_args():
    raw = stack_raw("dev")
    edit(raw, f"{NS}:endpoint.environmentVariables", {"PYTHONHASHSEED": "42", "VLLM_X": "1"})
    edit(
        raw,
        f"{NS}:endpoint.prefill.args",
        ["--max-num-seqs", "8", "--gpu-memory-utilization", "0.7"],
    )
    edit(raw, f"{NS}:endpoint.decode.args", ["--enable-chunked-prefill"])
    m = manifest(raw)
    assert env(m)["PYTHONHASHSEED"] == "42" and env(m)["VLLM_X"] == "1"
    pd = m["spec"]["pdSpec"]
    assert pd["prefillSpec"]["args"] == [
        "--max-num-seqs", "8", "--enforce-eager", "--gpu-memory-utilization", "0.7"
    ]  # fmt: skip
    assert pd["decodingSpec"]["args"] == ["--max-num-seqs", "32", "--enable-chunked-prefill"]


def test_colocated_mode_has_no_pd_spec_and_the_same_gpu_budget():
    m = manifest(edit(stack_raw("dev"), f"{NS}:endpoint.mode", "colocated"))
    assert "pdSpec" not in m["spec"]
    assert m["spec"]["replicas"] == 2
    assert flag_value(m["spec"]["worker"]["args"], "--max-num-seqs") == "32"
    assert m["metadata"]["labels"] == {"hyperpod-dpd/mode": "colocated"}


@pytest.mark.parametrize(
    ("instance_type", "efa", "memory"),
    [
        ("ml.p5.48xlarge", "32", "1024Gi"),
        ("ml.p5en.48xlarge", "16", "1024Gi"),
        ("ml.p6-b200.48xlarge", "8", "1024Gi"),
        ("ml.p6-b300.48xlarge", "16", "2048Gi"),
    ],
)
def test_role_resources_are_the_instance_types_gpus_and_efa(instance_type, efa, memory):
    raw = stack_raw("dev")
    for group in ("prefill", "decode"):
        edit(raw, f"{NS}:instanceGroups.{group}.instanceType", instance_type)
    m = manifest(raw)
    for role in ("prefillSpec", "decodingSpec"):
        requests = m["spec"]["pdSpec"][role]["resources"]["requests"]
        assert requests["nvidia.com/gpu"] == "8"
        assert requests["vpc.amazonaws.com/efa"] == efa
        assert requests["memory"] == memory
    assert m["spec"]["instanceType"] == instance_type


@pytest.mark.parametrize(
    ("instance_type", "amounts"),
    [("ml.p4d.24xlarge", {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4", "cpu": "48",
                          "memory": "576Gi"}),
     ("ml.g6e.48xlarge", {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4", "cpu": "96",
                          "memory": "768Gi"})],
)  # fmt: skip
def test_a_colocated_worker_requests_its_own_types_numbers(instance_type, amounts):
    """The canary's colocated baseline on a type outside the DPD catalog: the worker asks for
    that type's GPUs, EFA interfaces and half its CPUs and memory, not a p5's 8 / 96 / 1024Gi
    (96 CPUs never fit an ml.p4d.24xlarge, 96 vCPUs in all)."""
    raw = edit(stack_raw("canary"), f"{NS}:instanceGroups.colocated.instanceType", instance_type)
    s = parse_settings(raw)
    baseline = next(x for x in s.entries() if x.key == "baseline")
    resources = build_endpoint(s, FACTS, entry=baseline).to_manifest()["spec"]["worker"]
    assert resources["resources"] == {"requests": amounts, "limits": amounts}


def test_a_colocated_pool_on_two_types_fits_the_nodes_of_both():
    """The one colocated endpoint of a stack without a colocated group runs on every GPU group:
    on p5 (32 EFA interfaces) and p5en (16) nodes it asks for 16, not the decode group's 32."""
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.mode", "colocated")
    edit(raw, f"{NS}:instanceGroups.prefill.instanceType", "ml.p5en.48xlarge")
    requests = manifest(raw)["spec"]["worker"]["resources"]["requests"]
    assert requests == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "16", "cpu": "96",
                        "memory": "1024Gi"}  # fmt: skip


def test_no_worker_resources_for_a_type_without_gpu_numbers():
    """No default to fall back to: the settings refuse such a GPU group before any spec."""
    with pytest.raises(ValueError, match=r"ml\.p6e-gb200\.36xlarge"):
        node_resources("ml.p6e-gb200.36xlarge")


def test_mixed_gpu_types_use_instance_types():
    raw = edit(stack_raw("dev"), f"{NS}:instanceGroups.prefill.instanceType", "ml.p5en.48xlarge")
    spec = manifest(raw)["spec"]
    assert "instanceType" not in spec
    assert spec["instanceTypes"] == ["ml.p5.48xlarge", "ml.p5en.48xlarge"]


def test_shm_volume_only_with_tensor_parallelism():
    assert manifest()["spec"]["kubernetes"]["volumes"][0]["emptyDir"]["medium"] == "Memory"
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.tensorParallelSize", 1)
    assert "kubernetes" not in manifest(raw)["spec"]


def test_placement_group_is_named_in_topology():
    s = parse_settings(stack_raw("dev"))
    facts = ClusterFacts(model_bucket="b", az_name="us-east-2b", placement_group="pg-1")
    topology = build_endpoint(s, facts).to_manifest()["spec"]["pdSpec"]["topologySpec"]
    assert topology["placementGroup"] == "pg-1"


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("hf://meta-llama/Llama-3.3-70B-Instruct", "Llama-3-3-70B-Instruct"),
        ("s3://bucket/models/qwen2.5_72b/", "qwen2-5-72b"),
        ("/data/x..y", "x-y"),
    ],
)
def test_model_name_is_crd_valid(source, name):
    assert model_name(source) == name


def test_colocated_mode_takes_the_chunked_prefill_knobs_and_dpd_ignores_them():
    raw = edit(stack_raw("dev"), f"{NS}:endpoint.colocated",
               {"maxNumBatchedTokens": 2048, "maxNumPartialPrefills": 2})  # fmt: skip
    dpd = manifest(raw)
    colocated = manifest(edit(raw, f"{NS}:endpoint.mode", "colocated"))
    args = colocated["spec"]["worker"]["args"]
    assert flag_value(args, "--max-num-batched-tokens") == "2048"
    assert flag_value(args, "--max-num-partial-prefills") == "2"
    assert flag_value(args, "--long-prefill-token-threshold") is None  # vLLM's own default
    for spec in ("prefillSpec", "decodingSpec"):
        assert "--max-num-batched-tokens" not in dpd["spec"]["pdSpec"][spec]["args"]
    assert "--max-num-batched-tokens" not in dpd["spec"]["worker"]["args"]
    # Without the knobs, colocated runs with vLLM's defaults: the untuned baseline.
    plain = manifest(edit(stack_raw("dev"), f"{NS}:endpoint.mode", "colocated"))
    assert flag_value(plain["spec"]["worker"]["args"], "--max-num-batched-tokens") is None
