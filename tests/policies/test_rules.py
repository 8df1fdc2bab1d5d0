"""Each rule: silent on the repo's stacks; one change per test, asserting the exact message."""

from __future__ import annotations

import copy
import json

import pytest

from core.vocabulary import ROLE_LABEL, RULE_NAMES
from policies.rules import ALL_RULES, Limits, evaluate
from policies.rules.views import UNKNOWN
from tests.policies.conftest import gpu_group, iec_spec, named, recorded, set_env

RULES = {r.name: r for r in ALL_RULES}
IEC_URN = "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:workloads:InferenceEndpoint$kubernetes:inference.sagemaker.aws.amazon.com/v1:InferenceEndpointConfig::endpoint-iec"
CLUSTER_URN = "urn:pulumi:dev::hyperpod-dpd::hyperpod-dpd:infra:HyperPodCluster$aws-native:sagemaker:Cluster::hyperpod-cluster"


def findings(rule: str, views, limits: Limits | None = None) -> list[tuple[str, str]]:
    return [(f.urn, f.message) for f in RULES[rule].check(views, limits or Limits())]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_repo_stacks_have_no_violations(stack):
    assert evaluate(recorded(stack)) == []


def test_every_rule_is_registered_once_with_a_kebab_name():
    names = [r.name for r in ALL_RULES]
    assert len(names) == len(set(names)) == 21
    assert all(n.startswith("hyperpod-dpd-") and n == n.lower() for n in names)


# --- hyperpod-dpd-instance-type -------------------------------------------------------------


def test_instance_type_on_the_endpoint(dev):
    iec_spec(dev)["instanceType"] = "ml.g6e.48xlarge"
    assert findings("hyperpod-dpd-instance-type", dev) == [
        (
            IEC_URN,
            "endpoint instance type ml.g6e.48xlarge does not support DPD (allowed: ml.p5.48xlarge, "
            "ml.p5e.48xlarge, ml.p5en.48xlarge, ml.p6-b200.48xlarge, ml.p6-b300.48xlarge); set "
            "hyperpod-dpd:instanceGroups.<group>.instanceType to ml.p5.48xlarge (or another of "
            "them), or set hyperpod-dpd:endpoint.mode to colocated",
        )
    ]


def test_instance_type_of_a_gpu_group(dev):
    gpu_group(dev, "prefill")["instanceType"] = "ml.g6e.48xlarge"
    ((urn, message),) = findings("hyperpod-dpd-instance-type", dev)
    assert urn == CLUSTER_URN
    assert message.startswith(
        "instance group prefill (prefill) uses ml.g6e.48xlarge, which does not support DPD"
    )
    assert message.endswith(
        "set hyperpod-dpd:instanceGroups.prefill.instanceType to ml.p5.48xlarge (or another of them)"
    )


def test_colocated_endpoints_may_use_other_types(dev):
    spec = iec_spec(dev)
    del spec["pdSpec"]
    spec["instanceType"] = "ml.g6e.48xlarge"
    assert findings("hyperpod-dpd-instance-type", dev) == []


def test_the_groups_of_a_colocated_stack_may_be_other_types(dev):
    # A colocated endpoint on g6e groups: nothing here runs DPD.
    spec = iec_spec(dev)
    del spec["pdSpec"]
    spec["instanceType"] = "ml.g6e.48xlarge"
    for role in ("prefill", "decode"):
        gpu_group(dev, role)["instanceType"] = "ml.g6e.48xlarge"
    assert findings("hyperpod-dpd-instance-type", dev) == []


def test_a_colocated_group_beside_a_dpd_endpoint_may_be_another_type(dev):
    group = gpu_group(dev, "decode")
    baseline = {**group, "instanceGroupName": "baseline", "instanceType": "ml.g6e.48xlarge"}
    baseline["kubernetesConfig"] = {"labels": {**group["kubernetesConfig"]["labels"]}}
    baseline["kubernetesConfig"]["labels"][ROLE_LABEL] = "colocated"
    named(dev, "hyperpod-cluster").props["instanceGroups"].append(baseline)
    assert findings("hyperpod-dpd-instance-type", dev) == []


# --- hyperpod-dpd-single-az -----------------------------------------------------------------


def test_gpu_groups_in_two_subnets(dev):
    gpu_group(dev, "decode")["overrideVpcConfig"]["subnets"] = ["subnet-0other"]
    ((urn, message),) = findings("hyperpod-dpd-single-az", dev)
    assert urn == CLUSTER_URN
    assert message.startswith("GPU instance groups use 2 different subnets (")
    assert message.endswith("all must share the one GPU subnet of hyperpod-dpd:availabilityZoneId")


def test_gpu_group_without_override_inherits_multi_az(dev):
    del gpu_group(dev, "decode")["overrideVpcConfig"]
    assert findings("hyperpod-dpd-single-az", dev) == [
        (
            CLUSTER_URN,
            "GPU instance group decode has no overrideVpcConfig: it would inherit the cluster's "
            "multi-AZ subnets; pin it to the GPU subnet of hyperpod-dpd:availabilityZoneId",
        )
    ]


def test_same_az_false(dev):
    iec_spec(dev)["pdSpec"]["topologySpec"]["sameAZ"] = False
    assert findings("hyperpod-dpd-single-az", dev) == [
        (
            IEC_URN,
            "pdSpec.topologySpec.sameAZ is false: prefill and decode pods may land in different "
            "AZs and KV transfers leave EFA; remove the override",
        )
    ]


# --- hyperpod-dpd-efa -----------------------------------------------------------------------


def test_missing_efa_interface(dev):
    del gpu_group(dev, "decode")["networkInterface"]
    assert findings("hyperpod-dpd-efa", dev) == [
        (
            CLUSTER_URN,
            "GPU instance group decode has no EFA network interface (got None); KV transfers "
            "would fall back to TCP (< 1 GB/s): set interfaceType efa",
        )
    ]


def test_missing_self_referencing_egress(dev):
    egress = named(dev, "nodes-efa-egress-self")
    dev.remove(egress)
    sg = gpu_group(dev)["overrideVpcConfig"]["securityGroupIds"][0]
    message = (
        f"security group {sg} of GPU instance group {{}} lacks a self-referencing all-traffic "
        "egress rule; EFA needs both"
    )
    assert findings("hyperpod-dpd-efa", dev) == [
        (CLUSTER_URN, message.format("decode")),
        (CLUSTER_URN, message.format("prefill")),
    ]


# --- hyperpod-dpd-pd-buffer-fits ------------------------------------------------------------


def test_32_gib_buffer_at_075_on_h100_does_not_fit(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(32 * 2**30))
    assert findings("hyperpod-dpd-pd-buffer-fits", dev) == [
        (
            IEC_URN,
            "PD_BUFFER_SIZE 32 GiB + 2 GiB overhead does not fit the 20.0 GiB each H100 leaves at "
            "--gpu-memory-utilization 0.75 on the decoder; set "
            # 0.27, not the decoder's own 0.24: the prefiller reads the same key and needs 0.27.
            "hyperpod-dpd:endpoint.gpuMemoryUtilization between 0.27 and 0.57, or lower "
            "hyperpod-dpd:endpoint.pdBufferSize",
        )
    ]


def _set_arg(views, flag, value):
    args = iec_spec(views)["worker"]["args"]
    args[args.index(flag) + 1] = value


def test_following_the_buffer_fix_gives_a_bootable_decoder(dev):
    # The old advice (0.57 - the buffer only) ignored the weights: a 60 GiB buffer left no
    # utilization that holds both; now the fix says so and names what else to change.
    set_env(dev, "PD_BUFFER_SIZE", str(60 * 2**30))
    ((_, message),) = findings("hyperpod-dpd-pd-buffer-fits", dev)
    assert "no --gpu-memory-utilization works" in message
    assert "shrink hyperpod-dpd:endpoint.pdBufferSize to 58GiB" in message
    set_env(dev, "PD_BUFFER_SIZE", str(32 * 2**30))
    _set_arg(dev, "--gpu-memory-utilization", "0.57")  # what the fix above says
    assert findings("hyperpod-dpd-pd-buffer-fits", dev) == []
    assert findings("hyperpod-dpd-gpu-memory", dev) == []


# --- hyperpod-dpd-gpu-memory ----------------------------------------------------------------


def test_a_very_low_utilization_cannot_hold_the_weights(dev):
    _set_arg(dev, "--gpu-memory-utilization", "0.1")
    found = findings("hyperpod-dpd-gpu-memory", dev)
    assert [m.split(":")[0] for _, m in found] == [
        "prefill workers cannot start",
        "decode workers cannot start",
    ]
    assert found[1][1] == (
        "decode workers cannot start: llama-3.3-70b at TP 8 needs 19.1 GiB per GPU for weights, "
        "activations and the KV cache of one 16384-token sequence, but --gpu-memory-utilization "
        "0.1 gives vLLM 8.0 GiB of each H100's 80.0 GiB; set "
        # Both roles read the key: a value in range for the decoder and the prefiller alike.
        "hyperpod-dpd:endpoint.gpuMemoryUtilization between 0.27 and 0.87"
    )


def test_405b_on_h100_fits_no_utilization_and_says_what_else(dev):
    for name in ("sizing-model",):
        named(dev, "endpoint-iec").props["metadata"]["annotations"][f"hyperpod-dpd/{name}"] = (
            "llama-3.1-405b"
        )
    ((_, _prefill), (_, decode)) = findings("hyperpod-dpd-gpu-memory", dev)
    # The weights alone (94.5 GiB per GPU at TP 8) exceed an H100: no context length can fit,
    # so the advice says so and names only what would work (issue 26, "advice must help").
    assert "the weights alone do not fit: llama-3.1-405b at TP 8 is 94.5 GiB per GPU" in decode
    assert "maxModelLen" not in decode and "tensorParallelSize" not in decode
    assert decode.endswith(
        "more memory per GPU: ml.p5e.48xlarge (H200, 141 GiB), ml.p5en.48xlarge (H200, 141 GiB), "
        "ml.p6-b200.48xlarge (B200, 179 GiB), ml.p6-b300.48xlarge (B300, 269 GiB), or stage an "
        "FP8 checkpoint of llama-3.1-405b (half the weights) at TP 8"
    )


@pytest.mark.parametrize(
    "instance_type", ["ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.p6-b200.48xlarge"]
)
def test_following_the_405b_advice_makes_the_workers_fit(dev, instance_type):
    """Each instance type the advice names, applied to the stack it was shown for, removes the
    problem (the hint is checked with the same sizing before it is offered)."""
    named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/sizing-model"] = (
        "llama-3.1-405b"
    )
    assert findings("hyperpod-dpd-gpu-memory", dev)
    for name in ("prefill", "decode"):
        gpu_group(dev, name)["instanceType"] = instance_type
    iec_spec(dev)["instanceType"] = instance_type
    _set_arg(dev, "--gpu-memory-utilization", "0.85")
    assert findings("hyperpod-dpd-gpu-memory", dev) == []


def test_overhead_limit_is_tunable(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(17 * 2**30))
    assert findings("hyperpod-dpd-pd-buffer-fits", dev) == []  # 17 + 2 <= 20
    assert len(findings("hyperpod-dpd-pd-buffer-fits", dev, Limits(overhead_gib=4))) == 1


# --- hyperpod-dpd-pd-buffer-capacity --------------------------------------------------------


def test_buffer_smaller_than_one_max_len_transfer(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(512 * 2**20))
    found = [m for _, m in findings("hyperpod-dpd-pd-buffer-capacity", dev)]
    assert found[0] == (
        "PD_BUFFER_SIZE 0.5 GiB holds 51 LMCache chunks, fewer than the 64 of one 16384-token "
        "prompt: the longest prompts can never be transferred; raise "
        "hyperpod-dpd:endpoint.pdBufferSize to 1GiB"
    )


def test_assumed_load_shortfall_is_advisory(dev):
    set_env(dev, "PD_BUFFER_SIZE", str(6 * 2**30))  # 614 chunks: 25 transfers < 32 max-num-seqs
    (finding,) = RULES["hyperpod-dpd-pd-buffer-capacity"].check(dev, Limits())
    assert finding.enforcement == "advisory"
    assert finding.message == (
        "PD_BUFFER_SIZE 6 GiB holds 25 transfers of 6035 tokens at once, fewer than the 32 "
        "assumed (set hyperpod-dpd:endpoint.expectedPromptTokens and expectedInFlightTransfers "
        "to size for your load); the decoder will log 'Failed to allocate memory object'. Set "
        "hyperpod-dpd:endpoint.pdBufferSize to 8GiB or add decode replicas"
    )


def test_expected_load_shortfall_is_mandatory(dev):
    notes = named(dev, "endpoint-iec").props["metadata"]["annotations"]
    notes["hyperpod-dpd/expected-prompt-tokens"] = "8000"
    notes["hyperpod-dpd/expected-in-flight-transfers"] = "64"
    (finding,) = RULES["hyperpod-dpd-pd-buffer-capacity"].check(dev, Limits())
    assert finding.enforcement is None  # the rule's own level: mandatory
    assert (
        "holds 25 transfers of 8000 tokens at once, fewer than the 64 expected" in finding.message
    )
    assert finding.message.endswith(
        "Set hyperpod-dpd:endpoint.pdBufferSize to 20GiB or add decode replicas"
    )


# --- hyperpod-dpd-hash-seed -----------------------------------------------------------------


def test_hash_seed_removed(dev):
    set_env(dev, "PYTHONHASHSEED")
    assert findings("hyperpod-dpd-hash-seed", dev) == [
        (
            IEC_URN,
            "PYTHONHASHSEED is not set: prefill and decode hash KV cache keys differently and the "
            "decoder recomputes every prompt; set "
            'hyperpod-dpd:endpoint.environmentVariables.PYTHONHASHSEED to "0"',
        )
    ]


def test_hash_seed_random(dev):
    set_env(dev, "PYTHONHASHSEED", "random")
    assert findings("hyperpod-dpd-hash-seed", dev) == [
        (
            IEC_URN,
            "PYTHONHASHSEED is 'random', not a fixed integer; set "
            'hyperpod-dpd:endpoint.environmentVariables.PYTHONHASHSEED to "0"',
        )
    ]


# --- hyperpod-dpd-image ---------------------------------------------------------------------


def test_unknown_image(dev):
    iec_spec(dev)["worker"]["image"] = "vllm/vllm-openai:v0.19.0"
    ((_, message),) = findings("hyperpod-dpd-image", dev)
    assert message.startswith("image vllm/vllm-openai:v0.19.0 is not a documented DPD image (")
    assert "hyperpod-dpd:endpoint.imageDpdCapable: true" in message


def test_image_marked_dpd_capable_or_trusted_by_limits(dev):
    iec_spec(dev)["worker"]["image"] = "my.registry/vllm-dpd:1"
    assert len(findings("hyperpod-dpd-image", dev)) == 1
    assert (
        findings("hyperpod-dpd-image", dev, Limits(extra_dpd_images=("my.registry/vllm-dpd:1",)))
        == []
    )
    named(dev, "endpoint-iec").props["metadata"]["annotations"][
        "hyperpod-dpd/dpd-capable-image"
    ] = "true"
    assert findings("hyperpod-dpd-image", dev) == []


# --- hyperpod-dpd-routing-threshold ---------------------------------------------------------


@pytest.mark.parametrize("threshold", [0, 255])
def test_threshold_below_one_chunk(dev, threshold):
    iec_spec(dev)["pdSpec"]["routingThreshold"] = threshold
    assert findings("hyperpod-dpd-routing-threshold", dev) == [
        (
            IEC_URN,
            f"routingThreshold {threshold} is below one LMCache chunk (256 tokens): short prompts "
            "on the disaggregated path can hang the decoder; set "
            "hyperpod-dpd:endpoint.routingThreshold to at least 256 (docs' default 4096)",
        )
    ]


def test_threshold_at_max_model_len(dev):
    iec_spec(dev)["pdSpec"]["routingThreshold"] = 16384
    assert findings("hyperpod-dpd-routing-threshold", dev) == [
        (
            IEC_URN,
            "routingThreshold 16384 >= --max-model-len 16384: no request is ever disaggregated; "
            "lower hyperpod-dpd:endpoint.routingThreshold to 4096 (docs' default 4096)",
        )
    ]


# --- hyperpod-dpd-tensor-parallel -----------------------------------------------------------


def test_decode_tp_below_prefill_tp(dev):
    iec_spec(dev)["pdSpec"]["decodingSpec"]["args"] += ["--tensor-parallel-size", "4"]
    assert (
        IEC_URN,
        "decode TP 4 < prefill TP 8: unsupported, the decoder crashes; set "
        "hyperpod-dpd:endpoint.prefill.tensorParallelSize to 4, or raise it on decode",
    ) in findings("hyperpod-dpd-tensor-parallel", dev)


def test_gpu_request_below_the_node(dev):
    role = iec_spec(dev)["pdSpec"]["prefillSpec"]
    role["resources"]["requests"]["nvidia.com/gpu"] = "4"
    assert findings("hyperpod-dpd-tensor-parallel", dev) == [
        (
            IEC_URN,
            "prefill pods request 4 GPUs but ml.p5.48xlarge has 8: one DPD worker owns a node; "
            "request all of them",
        )
    ]


def test_tp_above_gpus_per_node(dev):
    iec_spec(dev)["pdSpec"]["prefillSpec"]["args"] += ["--tensor-parallel-size", "16"]
    assert (
        IEC_URN,
        "prefill --tensor-parallel-size 16 exceeds the 8 GPUs of one ml.p5.48xlarge; set "
        "hyperpod-dpd:endpoint.prefill.tensorParallelSize to 8 or less",
    ) in findings("hyperpod-dpd-tensor-parallel", dev)


# --- hyperpod-dpd-operator-version ----------------------------------------------------------


def test_operator_below_3_2(dev):
    named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/operator-version"] = (
        "3.1"
    )
    assert findings("hyperpod-dpd-operator-version", dev) == [
        (
            IEC_URN,
            "inference operator 3.1 does not support pdSpec (needs 3.2 or newer); set "
            "hyperpod-dpd:inferenceOperator.version to 3.3 (add-on v1.4.0-eksbuild.1) or "
            "hyperpod-dpd:endpoint.mode to colocated",
        )
    ]


def test_operator_version_unknown(dev):
    del named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/operator-version"]
    ((_, message),) = findings("hyperpod-dpd-operator-version", dev)
    assert message.startswith("the endpoint does not say which inference operator version")


# --- advisories -----------------------------------------------------------------------------


def test_several_prefillers_with_prefixaware(dev):
    iec_spec(dev)["pdSpec"]["prefillSpec"]["replicas"] = 3
    assert findings("hyperpod-dpd-routing-strategy", dev) == [
        (
            IEC_URN,
            "3 prefill replicas with routingStrategy prefixaware: unless prompts share "
            "prefixes, set hyperpod-dpd:endpoint.routingStrategy to roundrobin",
        )
    ]


def test_small_model(dev):
    named(dev, "endpoint-iec").props["metadata"]["annotations"]["hyperpod-dpd/sizing-model"] = (
        "llama-3.1-8b"
    )
    assert findings("hyperpod-dpd-model-size", dev) == [
        (
            IEC_URN,
            "llama-3.1-8b is a 8B dense model: DPD rarely beats colocated serving below dense "
            "70B; benchmark both (hyperpod-dpd:endpoint.mode)",
        )
    ]


def test_no_shm_volume_with_tp(dev):
    del iec_spec(dev)["kubernetes"]
    assert findings("hyperpod-dpd-shm-volume", dev) == [
        (
            IEC_URN,
            "tensor parallelism 8 without a memory-backed volume for /dev/shm; NCCL may fail to "
            "create shared memory segments",
        )
    ]


# --- security -------------------------------------------------------------------------------


def test_bucket_without_public_block_encryption_or_tls(dev):
    bucket = named(dev, "models-bucket")
    name = bucket.props["bucket"]
    for suffix in ("public-access-block", "encryption", "tls-only"):
        dev.remove(named(dev, f"models-{suffix}"))
    assert [m for _, m in findings("hyperpod-dpd-s3-buckets", dev)] == [
        f"bucket {name} does not block all public access",
        f"bucket {name} has no default encryption",
        f"bucket {name} does not deny requests without TLS",
    ]


def test_iam_wildcards(dev):
    policy = named(dev, "hyperpod-execution-s3")
    policy.props["policy"] = json.dumps(
        {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"},
                       {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "*"}]}
    )  # fmt: skip
    assert [m for _, m in findings("hyperpod-dpd-iam-wildcards", dev)] == [
        'hyperpod-execution-s3 allows every action ("Action": "*"); list the actions',
        "hyperpod-execution-s3 allows s3:GetObject on every S3 resource; scope it to bucket ARNs",
    ]


def test_ingress_from_anywhere(dev):
    named(dev, "nodes-vpc-ingress").props["cidrIpv4"] = "0.0.0.0/0"
    assert [m for _, m in findings("hyperpod-dpd-public-ingress", dev)] == [
        "nodes-vpc-ingress lets in 0.0.0.0/0; restrict it to the VPC or known CIDRs"
    ]


@pytest.mark.parametrize("cidrs", [[], ["0.0.0.0/0"]])
def test_eks_endpoint_open_to_the_internet(dev, cidrs):
    vpc = named(dev, "eks-cluster").props["vpcConfig"]
    vpc["publicAccessCidrs"] = cidrs
    assert [m for _, m in findings("hyperpod-dpd-eks-endpoint", dev)] == [
        "the EKS API endpoint is public to the whole internet; list your CIDRs in "
        "hyperpod-dpd:eks.publicAccessCidrs (empty keeps it private)"
    ]


def test_two_halves_of_the_internet_are_the_internet(dev):
    vpc = named(dev, "eks-cluster").props["vpcConfig"]
    vpc["publicAccessCidrs"] = ["0.0.0.0/1", "128.0.0.0/1"]
    assert len(findings("hyperpod-dpd-eks-endpoint", dev)) == 1
    # Neither /9 alone is internet-wide (< a /8 of public space); together they are.
    vpc["publicAccessCidrs"] = ["11.0.0.0/9", "11.128.0.0/9"]
    ((_, message),) = findings("hyperpod-dpd-eks-endpoint", dev)
    assert "(11.0.0.0/9, 11.128.0.0/9 together cover it)" in message
    vpc["publicAccessCidrs"] = ["10.0.0.0/8", "11.0.0.0/9"]  # private space does not count
    assert findings("hyperpod-dpd-eks-endpoint", dev) == []


def test_ingress_split_into_halves_is_refused(dev):
    rule = named(dev, "nodes-vpc-ingress").props
    rule["cidrIpv4"] = "0.0.0.0/1"
    other = copy.deepcopy(named(dev, "nodes-vpc-ingress"))
    dev.append(
        type(other)(
            other.type,
            "nodes-more",
            other.urn + "-more",
            {**other.props, "cidrIpv4": "128.0.0.0/1"},
        )
    )
    found = findings("hyperpod-dpd-public-ingress", dev)
    assert len(found) == 2
    assert "with 1 more rule(s) of its group: the internet" in found[0][1]


def _second_ingress(dev, name: str, props: dict) -> None:
    other = named(dev, "nodes-vpc-ingress")
    dev.append(type(other)(other.type, name, other.urn + name, {**other.props, **props}))


def test_on_a_first_preview_rules_of_unknown_groups_are_not_judged_as_one_group(dev):
    """A first preview: no group has an ID yet. Two pieces that are the internet only together
    (neither /9 alone is a /8 of public space), in rules whose groups are unknown, are not known
    to be one group's: not checkable yet, not a violation."""
    rule = named(dev, "nodes-vpc-ingress").props
    rule |= {"cidrIpv4": "11.0.0.0/9", "securityGroupId": UNKNOWN}
    _second_ingress(dev, "other-ingress", {"cidrIpv4": "11.128.0.0/9", "securityGroupId": UNKNOWN})
    found = list(RULES["hyperpod-dpd-public-ingress"].check(dev, Limits()))
    assert len(found) == 2 and all(f.unchecked for f in found)
    assert found[0].message.startswith("cannot check during preview: the security group of")
    # ... but one rule open to everything is refused whatever its group.
    rule["cidrIpv4"] = "0.0.0.0/0"
    assert [(f.message, f.unchecked) for f in RULES["hyperpod-dpd-public-ingress"].check(
        dev, Limits())] == [
        ("nodes-vpc-ingress lets in 0.0.0.0/0; restrict it to the VPC or known CIDRs", False)
    ]  # fmt: skip


def test_plaintext_hf_token(dev):
    set_env(dev, "HF_TOKEN", "hf_" + "a" * 34)
    assert [m for _, m in findings("hyperpod-dpd-hf-token", dev)] == [
        "hyperpod-dpd:endpoint.environmentVariables.HF_TOKEN holds a token in plaintext (it "
        "would sit in the manifest and the stack's state): remove HF_TOKEN from "
        "hyperpod-dpd:endpoint.environmentVariables and keep the token a secret: "
        "`pulumi config set --secret hyperpod-dpd:hfToken hf_...`",
    ]


def test_plaintext_hf_token_under_another_name_and_elsewhere(dev):
    set_env(dev, "MY_HUB_KEY", "hf_" + "b" * 34)
    named(dev, "checkpoint-job").props["metadata"]["labels"]["x"] = "hf_" + "c" * 30
    assert sorted(findings("hyperpod-dpd-hf-token", dev)) == [
        (
            named(dev, "checkpoint-job").urn,
            "checkpoint-job carries a Hugging Face token in plaintext; use `pulumi config set "
            "--secret hyperpod-dpd:hfToken hf_...`",
        ),
        (
            IEC_URN,
            "hyperpod-dpd:endpoint.environmentVariables.MY_HUB_KEY holds a token in plaintext (it "
            "would sit in the manifest and the stack's state): remove MY_HUB_KEY from "
            "hyperpod-dpd:endpoint.environmentVariables and keep the token a secret: "
            "`pulumi config set --secret hyperpod-dpd:hfToken hf_...`",
        ),
    ]


def test_rule_names_are_the_vocabulary_s():
    assert tuple(r.name for r in ALL_RULES) == RULE_NAMES


# --- evaluation -----------------------------------------------------------------------------


def test_enforcement_overrides_and_advisories_mandatory(dev):
    iec_spec(dev)["pdSpec"]["prefillSpec"]["replicas"] = 3
    gpu_group(dev, "prefill")["instanceCount"] = 3
    (advisory,) = evaluate(dev)
    assert (advisory.policy, advisory.enforcement) == ("hyperpod-dpd-routing-strategy", "advisory")
    assert evaluate(dev, advisories_mandatory=True)[0].enforcement == "mandatory"
    assert evaluate(dev, enforcement={"hyperpod-dpd-routing-strategy": "disabled"}) == []


# --- hyperpod-dpd-role-capacity ------------------------------------------------------------


def test_more_decode_replicas_than_decode_nodes(dev):
    iec_spec(dev)["pdSpec"]["decodingSpec"]["replicas"] = 2
    assert findings("hyperpod-dpd-role-capacity", dev) == [
        (
            IEC_URN,
            "2 decode replicas need 2 nodes but the decode instance groups have 1: lower "
            "hyperpod-dpd:endpoint.decode.replicas to 1, or raise "
            "hyperpod-dpd:instanceGroups.decode.instanceCount to 2",
        )
    ]


def test_colocated_replicas_against_all_gpu_nodes(dev):
    spec = iec_spec(dev)
    del spec["pdSpec"]
    spec["replicas"] = 3
    ((_, message),) = findings("hyperpod-dpd-role-capacity", dev)
    assert message.startswith(
        "3 prefill or decode replicas need 3 nodes but the prefill or decode instance groups have 2"
    )


@pytest.mark.parametrize(
    "image",
    [
        "lmcache/vllm-openai:v0.4.4",
        "lmcache/vllm-openai:0.4.4-cu128",
        "registry.example/vllm:nixl-1.2.0",
    ],
)
def test_images_with_a_known_dpd_breakage(dev, image):
    iec_spec(dev)["worker"]["image"] = image
    ((_, message),) = findings("hyperpod-dpd-image-known-issues", dev)
    assert message.startswith(f"image {image} carries a known DPD breakage: ")


@pytest.mark.parametrize(
    "image", ["lmcache/vllm-openai:v0.4.3", "lmcache/vllm-openai:v0.4.41", "x/nixl-1.2.1"]
)
def test_neighbouring_versions_are_not_flagged(dev, image):
    iec_spec(dev)["worker"]["image"] = image
    assert findings("hyperpod-dpd-image-known-issues", dev) == []


def test_a_token_inside_a_longer_value_is_found(dev):
    set_env(dev, "EXTRA_HEADERS", "Authorization: Bearer hf_" + "d" * 30)
    ((_, message),) = findings("hyperpod-dpd-hf-token", dev)
    assert message.startswith(
        "hyperpod-dpd:endpoint.environmentVariables.EXTRA_HEADERS holds a token"
    )
    iec_spec(dev)["worker"]["image"] = "registry.example/hf_" + "e" * 24 + "/vllm:1"
    assert len(findings("hyperpod-dpd-hf-token", dev)) == 2
