"""Config parsing: every key, good and bad values; messages name the key, value and fix."""

from __future__ import annotations

import pulumi
import pytest

from settings import ConfigError, parse_settings
from settings.config.errors import full_key
from tests.conftest import edit, run_stack, stack_raw
from tests.fix_hints.edits import apply, suggestions
from tests.settings.problems import only_problem, problems_of

NS = "hyperpod-dpd"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_repo_stacks_parse(stack):
    settings = parse_settings(stack_raw(stack))
    assert settings.endpoint.mode == "dpd"
    assert {g.role for g in settings.instance_groups.values()} == {"prefill", "decode", "system"}


def test_dev_values_reach_the_typed_model():
    s = parse_settings(stack_raw("dev"))
    assert s.region == "us-east-2"
    assert s.availability_zone_id == "use2-az2"
    assert s.network.control_plane_az_ids == ["use2-az1", "use2-az2"]
    assert sorted(s.instance_groups) == ["decode", "prefill", "system"]
    assert s.instance_groups["prefill"].instance_type == "ml.p5.48xlarge"
    assert s.instance_groups["system"].ebs_volume_size_gb == 100
    assert s.instance_groups["prefill"].ebs_volume_size_gb == 500  # documented default
    assert s.endpoint.pd_buffer_size == 8 * 2**30
    assert s.endpoint.prefill.max_num_seqs == 16 and s.endpoint.decode.max_num_seqs == 32
    assert s.checkpoint.revision == "6f6073b423013f6a7d4d9f39144961bfbfbc386b"


def test_settings_are_frozen():
    s = parse_settings(stack_raw("dev"))
    with pytest.raises(Exception, match="frozen"):
        s.endpoint.tensor_parallel_size = 4  # type: ignore[misc]


def test_omitted_objects_take_documented_defaults(dev_raw):
    for key in ("eks", "inferenceOperator", "observability", "endpoint"):
        edit(dev_raw, f"{NS}:{key}")
    s = parse_settings(dev_raw)
    assert s.eks.kubernetes_version == "1.33" and s.eks.public_access_cidrs == []
    assert s.inference_operator.addon_version == "v1.4.0-eksbuild.1"
    assert s.observability.enabled is True
    e = s.endpoint
    assert (e.mode, e.routing_threshold, e.routing_strategy) == ("dpd", 4096, "prefixaware")
    assert (e.gpu_memory_utilization, e.tensor_parallel_size) == (0.75, 8)
    assert e.image == "public.ecr.aws/deep-learning-containers/vllm:server-hyperpod-cuda-v1.1"


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("8GiB", 8 * 2**30),
        ("16 GiB", 16 * 2**30),
        ("512MiB", 512 * 2**20),
        (8589934592, 2**33),
        ("10GB", 10 * 10**9),
        ("1.5GiB", 3 * 2**29),
    ],
)
def test_pd_buffer_size_forms(dev_raw, text, size):
    edit(dev_raw, f"{NS}:endpoint.pdBufferSize", text)
    assert parse_settings(dev_raw).endpoint.pd_buffer_size == size


def test_environment_variable_scalars_become_strings(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.environmentVariables", {"PYTHONHASHSEED": 0, "X": False})
    env = parse_settings(dev_raw).endpoint.environment_variables
    assert env == {"PYTHONHASHSEED": "0", "X": "False"}


def test_checkpoint_prefix_defaults_to_source_and_revision(dev_raw):
    c = parse_settings(dev_raw).checkpoint
    assert c.effective_prefix == (
        "models/meta-llama/Llama-3.3-70B-Instruct/6f6073b423013f6a7d4d9f39144961bfbfbc386b"
    )
    edit(dev_raw, f"{NS}:checkpoint.prefix", "custom/llama/")
    assert parse_settings(dev_raw).checkpoint.effective_prefix == "custom/llama"


def test_local_and_s3_sources_need_no_commit_sha(dev_raw):
    edit(dev_raw, f"{NS}:checkpoint", {"source": "/data/llama", "staging": "manual"})
    assert parse_settings(dev_raw).checkpoint.effective_prefix == "models/llama"
    edit(dev_raw, f"{NS}:checkpoint", {"source": "s3://models-bucket/llama-70b"})
    assert parse_settings(dev_raw).checkpoint.source == "s3://models-bucket/llama-70b"


# One row per key: (path, bad value, a fragment of what is allowed). Each must be reported
# under its full key with the value received.
BAD_VALUES = [
    ("aws:region", "Ohio", "an AWS Region name"),
    (f"{NS}:availabilityZoneId", "us-east-2a", "not an AZ name such as us-east-2a"),
    (f"{NS}:network.vpcCidr", "10.0.0.0", "such as"),
    (f"{NS}:network.controlPlaneAzIds", "use2-az1", "a list"),
    (f"{NS}:network.natGateways", "many", "one of 'single', 'perAz'"),
    (f"{NS}:eks.kubernetesVersion", "latest", "such as"),
    (f"{NS}:eks.publicAccessCidrs", ["everyone"], "such as"),
    (f"{NS}:eks.adminRoleArns", ["admin"], "such as"),
    (f"{NS}:instanceGroups.prefill.instanceType", "p5.48xlarge", "such as"),
    (f"{NS}:instanceGroups.prefill.instanceCount", 0, ">= 1"),
    (f"{NS}:instanceGroups.prefill.instanceCount", "two", "a whole number"),
    (
        f"{NS}:instanceGroups.decode.role",
        "decoder",
        "one of 'prefill', 'decode', 'colocated', 'system'",
    ),
    (f"{NS}:instanceGroups.decode.trainingPlanArn", "plan-1", "such as"),
    (f"{NS}:instanceGroups.decode.ebsVolumeSizeGb", 0, ">= 1"),
    (f"{NS}:inferenceOperator.version", "latest", "such as"),
    (f"{NS}:inferenceOperator.addonVersion", "1.4.0", "such as"),
    (f"{NS}:observability.enabled", "sometimes", "true or false"),
    (f"{NS}:checkpoint.bucketName", "My_Bucket", "such as"),
    (f"{NS}:checkpoint.source", "", "at least 1 characters"),
    (f"{NS}:endpoint.name", "Llama_70B", "such as"),
    (f"{NS}:endpoint.namespace", "Inference", "such as"),
    (f"{NS}:endpoint.mode", "disaggregated", "one of 'dpd', 'colocated'"),
    (f"{NS}:endpoint.model", "", "at least 1 characters"),
    (f"{NS}:endpoint.image", "", "an image reference [registry/]repository:tag"),
    (f"{NS}:endpoint.tensorParallelSize", 0, ">= 1"),
    (f"{NS}:endpoint.tensorParallelSize", 2.5, "a whole number"),
    (f"{NS}:endpoint.maxModelLen", "long", "a whole number"),
    (f"{NS}:endpoint.gpuMemoryUtilization", 1.2, "<= 1"),
    (f"{NS}:endpoint.gpuMemoryUtilization", 0, "> 0"),
    (f"{NS}:endpoint.routingThreshold", -1, ">= 0"),
    (
        f"{NS}:endpoint.routingStrategy",
        "fastest",
        "one of 'prefixaware', 'kvaware', 'session', 'roundrobin'",
    ),
    (f"{NS}:endpoint.pdBufferSize", "8 gigs", "'8GiB'"),
    (f"{NS}:endpoint.pdBufferSize", 0, "greater than 0"),
    (f"{NS}:endpoint.prefill.replicas", 0, ">= 1"),
    (f"{NS}:endpoint.prefill.args", "--enforce-eager", "a list"),
    (f"{NS}:endpoint.prefill.maxNumSeqs", 0, ">= 1"),
    (f"{NS}:endpoint.decode.replicas", "one", "a whole number"),
    (f"{NS}:endpoint.decode.maxNumSeqs", -4, ">= 1"),
    (f"{NS}:endpoint.environmentVariables", ["PYTHONHASHSEED=0"], "a mapping"),
    (f"{NS}:endpoint.expectedPromptTokens", 0, ">= 1"),
    (f"{NS}:endpoint.expectedInFlightTransfers", "lots", "a whole number"),
]


@pytest.mark.parametrize(("path", "value", "allowed"), BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_bad_value_names_key_value_and_allowed(dev_raw, path, value, allowed):
    message = only_problem(edit(dev_raw, path, value))
    assert message.startswith(path)  # list items add their index: eks.adminRoleArns[0]
    assert ": got " in message
    assert allowed in message
    assert "Fix:" in message


def test_enum_fix_suggests_the_default(dev_raw):
    message = only_problem(edit(dev_raw, f"{NS}:endpoint.routingStrategy", "fastest"))
    assert message == (
        "hyperpod-dpd:endpoint.routingStrategy: got 'fastest'; allowed: one of 'prefixaware', "
        "'kvaware', 'session', 'roundrobin'.\n    Fix: pulumi config set --path "
        "'hyperpod-dpd:endpoint.routingStrategy' prefixaware   (or edit Pulumi.<stack>.yaml)"
    )


def test_environment_variable_name_is_checked(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.environmentVariables", {"BAD-NAME": "1"})
    assert "hyperpod-dpd:endpoint.environmentVariables.BAD-NAME" in only_problem(dev_raw)


@pytest.mark.parametrize(
    "path",
    [
        f"{NS}:availabilityZoneId",
        f"{NS}:network",
        f"{NS}:instanceGroups",
        "aws:region",
        f"{NS}:network.controlPlaneAzIds",
        f"{NS}:instanceGroups.decode.instanceType",
    ],
)
def test_missing_required_key(dev_raw, path):
    message = only_problem(edit(dev_raw, path))
    assert message.startswith(f"{path}: not set; allowed: a value is required")


def test_unknown_top_level_key_suggests_the_close_one(dev_raw):
    edit(dev_raw, f"{NS}:endpont", {"name": "x"})
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:endpont: got ")
    # endpoint is set already: the misspelled copy is removed, not renamed over it.
    assert "did you mean 'hyperpod-dpd:endpoint'? It is set already: remove" in message
    assert "pulumi config rm --path 'hyperpod-dpd:endpont'" in message


def test_unknown_nested_key_suggests_the_close_one(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.tensorParalelSize", 8)
    message = only_problem(dev_raw)
    assert message.startswith("hyperpod-dpd:endpoint.tensorParalelSize: got 8;")
    assert "did you mean 'hyperpod-dpd:endpoint.tensorParallelSize'?" in message


def test_a_misspelled_key_is_renamed_keeping_its_value(dev_raw):
    """The fix renames it (its value is the user's), as the fix-hint audit follows it."""
    del dev_raw[f"{NS}:endpoint"]["routingThreshold"]
    edit(dev_raw, f"{NS}:endpoint.routingTreshold", 2048)
    problem = only_problem(dev_raw)
    assert (
        "rename hyperpod-dpd:endpoint.routingTreshold to hyperpod-dpd:endpoint.routingThreshold, "
        "keeping its value: pulumi config rm --path 'hyperpod-dpd:endpoint.routingTreshold' && "
        "pulumi config set --path 'hyperpod-dpd:endpoint.routingThreshold' '2048'"
    ) in problem
    [edits] = suggestions(problem.split("Fix: ", 1)[1])
    fixed = parse_settings(apply(dev_raw, edits))
    assert fixed.endpoint.routing_threshold == 2048


def test_other_namespaces_are_left_to_their_providers(dev_raw):
    dev_raw["aws:defaultTags"] = {"tags": {"team": "ml"}}
    dev_raw["kubernetes:enableServerSideApply"] = "true"
    parse_settings(dev_raw)


def test_plaintext_hf_token_is_rejected_without_echoing_it(dev_raw):
    dev_raw[f"{NS}:hfToken"] = "hf_plaintext_value"
    message = only_problem(dev_raw)
    assert "hf_plaintext_value" not in message
    assert "pulumi config set --secret hyperpod-dpd:hfToken" in message


def test_secret_hf_token_and_empty_default_are_accepted(dev_raw):
    dev_raw[f"{NS}:hfToken"] = "hf_value"
    parse_settings(dev_raw, secret_keys=[f"{NS}:hfToken"])
    dev_raw[f"{NS}:hfToken"] = ""  # Pulumi.yaml's declared default
    parse_settings(dev_raw)


def test_all_problems_are_reported_at_once(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.routingStrategy", "fastest")
    edit(dev_raw, f"{NS}:endpoint.mode", "both")
    edit(dev_raw, f"{NS}:instanceGroups.prefill.instanceCount", "x")
    keys = [p.split(":", 2)[1] for p in problems_of(dev_raw)]
    assert len(keys) == 3


def test_the_program_raises_config_errors_as_pulumi_run_errors(dev_raw):
    # RunError: `pulumi up` prints the message without a Python traceback.
    edit(dev_raw, f"{NS}:endpoint.routingStrategy", "fastest")
    with pytest.raises(ConfigError) as info:
        run_stack(dev_raw)
    assert isinstance(info.value, pulumi.RunError)
    assert "hyperpod-dpd:endpoint.routingStrategy: got 'fastest'" in str(info.value)


def test_a_fraction_set_from_the_command_line_is_a_number(dev_raw):
    # `pulumi config set --path 'hyperpod-dpd:endpoint.gpuMemoryUtilization' 0.8` stores the
    # text "0.8": the CLI turns only true/false and integers into YAML values.
    edit(dev_raw, "hyperpod-dpd:endpoint.gpuMemoryUtilization", "0.8")
    edit(dev_raw, "hyperpod-dpd:cost", {"hourlyPrices": {"ml.p5.48xlarge": "50.5"}})
    s = parse_settings(dev_raw)
    assert s.endpoint.gpu_memory_utilization == 0.8
    assert s.cost.hourly_prices == {"ml.p5.48xlarge": 50.5}
    edit(dev_raw, "hyperpod-dpd:endpoint.gpuMemoryUtilization", "high")
    assert only_problem(dev_raw).startswith(
        "hyperpod-dpd:endpoint.gpuMemoryUtilization: got 'high'; allowed: a number"
    )


def test_a_map_key_of_digits_is_a_name_in_the_fix_not_a_list_index(dev_raw):
    """pulumi config set --path reads [2] as a list index (a map cannot take one: the CLI
    refuses) and .2 as the map key "2": a group named 2 is instanceGroups.2."""
    groups = dev_raw["hyperpod-dpd:instanceGroups"]
    groups["2"] = {**groups.pop("decode"), "instanceType": "ml.p5.48xlrge"}
    message = only_problem(dev_raw)
    assert "'hyperpod-dpd:instanceGroups.2.instanceType' ml.p5.48xlarge" in message
    assert full_key(("eks", "publicAccessCidrs", 0)) == "hyperpod-dpd:eks.publicAccessCidrs[0]"
    # Quoted as ParsePropertyPath reads it back: \" is its only escape.
    assert full_key(("cost", "hourlyPrices", 'a"b\\c.d')) == (
        'hyperpod-dpd:cost.hourlyPrices["a\\"b\\c.d"]'
    )


def test_a_misspelled_provider_key_names_the_key_the_stack_reads(dev_raw):
    dev_raw["aws:regon"] = dev_raw.pop("aws:region")
    problems = problems_of(dev_raw)
    assert any(
        p.startswith("aws:regon: got 'us-east-2'")
        and "did you mean 'aws:region'? rename aws:regon to aws:region" in p
        for p in problems
    ), problems
    assert any(p.startswith("aws:region: not set") for p in problems)


def test_other_provider_keys_are_the_providers_own(dev_raw):
    dev_raw["aws:profile"] = "platform"
    dev_raw["kubernetes:context"] = "mine"
    parse_settings(dev_raw)  # no problem: keys of the providers, not typos


def test_an_instance_count_above_the_limit_gets_one_the_vpc_holds(dev_raw):
    """The API's 6758 would fail next on the VPC's addresses: the fix is a count that fits."""
    edit(dev_raw, f"{NS}:instanceGroups.decode.instanceCount", 100000)
    problem = only_problem(dev_raw)
    assert "instanceCount' 6758" not in problem
    [edits] = suggestions(problem.split("Fix: ", 1)[1])
    fixed = parse_settings(apply(dev_raw, edits))  # no problem left: not even the addresses
    assert 100 < fixed.instance_groups["decode"].instance_count < 6758
