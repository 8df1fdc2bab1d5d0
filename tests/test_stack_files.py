"""Stack files as careless or hostile users write them, planned through the CLI.

Each broken file must be refused with exit 2 (configuration: the message names the key) or 1
(a mandatory policy: the message names the rule and the key), never a traceback or exit 3, and
nothing may be registered. Each good file must keep planning with exit 0.
"""

from __future__ import annotations

import pytest
import yaml

from hyperpod_dpd.cli import main
from tests.conftest import ROOT, edit, stack_raw, write_project

NS = "hyperpod-dpd"
TOKEN = "hf_" + "Q" * 34
LLAMA_SHA = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"
ADMIN = "arn:aws:iam::111122223333:role/PlatformAdmin"

# name: (edits {key: value}, exit code, text the output must hold)
BROKEN: dict[str, tuple[dict, int, str]] = {
    # 1. an endpoint that cannot boot
    "405B on H100": (
        {
            "endpoint.model": "llama-3.1-405b",
            "checkpoint.source": "hf://meta-llama/Llama-3.1-405B-Instruct",
        },
        1,
        "hyperpod-dpd-gpu-memory",
    ),
    "utilization too low for the weights": (
        {"endpoint.gpuMemoryUtilization": 0.1},
        1,
        "between 0.27 and",  # the prefiller reads the key too: 0.27 holds both roles
    ),
    "buffer that leaves no utilization": (
        {"endpoint.pdBufferSize": "60GiB"},
        1,
        "no --gpu-memory-utilization works",
    ),
    # 2. CIDRs: parsed, and judged by the union of what they open
    "two halves of the internet": (
        {"eks.publicAccessCidrs": ["0.0.0.0/1", "128.0.0.0/1"]},
        1,
        "hyperpod-dpd-eks-endpoint",
    ),
    "octet over 255": (
        {"eks.publicAccessCidrs": ["300.1.2.0/24"]},
        2,
        f"{NS}:eks.publicAccessCidrs",
    ),
    "host bits set": ({"network.vpcCidr": "10.0.0.1/16"}, 2, "has host bits set"),
    "prefix over 32": (
        {"eks.publicAccessCidrs": ["10.0.0.0/33"]},
        2,
        f"{NS}:eks.publicAccessCidrs",
    ),
    "prefix /00": ({"eks.publicAccessCidrs": ["0.0.0.0/00"]}, 2, f"{NS}:eks.publicAccessCidrs"),
    # 3. model and checkpoint disagree; a context the model does not have
    "sizes Qwen, stages Llama": ({"endpoint.model": "qwen2.5-72b"}, 2, f"{NS}:endpoint.model"),
    "maxModelLen over Llama's context": (
        {"endpoint.maxModelLen": 200000},
        2,
        f"{NS}:endpoint.maxModelLen",
    ),
    "maxModelLen over Qwen's context": (
        {
            "endpoint.model": "qwen2.5-72b",
            "checkpoint.source": "hf://Qwen/Qwen2.5-72B-Instruct",
            "endpoint.maxModelLen": 40000,
        },
        2,
        "at most 32768",
    ),
    # 4. names the services reject; prefixes that widen the staging role
    "bucket as an IP address": ({"checkpoint.bucketName": "192.168.1.1"}, 2, "IP address"),
    "bucket with '..'": ({"checkpoint.bucketName": "my..models"}, 2, "two adjacent periods"),
    "bucket 'xn--'": ({"checkpoint.bucketName": "xn--models"}, 2, "'xn--'"),
    "bucket '-s3alias'": ({"checkpoint.bucketName": "models-s3alias"}, 2, "'-s3alias'"),
    "router Service name over 63": (
        {"endpoint.name": "a-very-long-endpoint-name-for-llama-three-three"},
        2,
        f"{NS}:endpoint.name",
    ),
    "prefix with a wildcard": ({"checkpoint.prefix": "models/*"}, 2, f"{NS}:checkpoint.prefix"),
    "prefix escaping with '..'": (
        {"checkpoint.prefix": "models/../other"},
        2,
        f"{NS}:checkpoint.prefix",
    ),
    "prefix with a leading '/'": ({"checkpoint.prefix": "/models/x"}, 2, f"{NS}:checkpoint.prefix"),
    # 5. namespaces the stack must not own
    "namespace kube-system": ({"endpoint.namespace": "kube-system"}, 2, f"{NS}:endpoint.namespace"),
    "the operator's namespace": (
        {"endpoint.namespace": "hyperpod-inference-system"},
        2,
        f"{NS}:endpoint.namespace",
    ),
    "the staging namespace": (
        {"endpoint.namespace": "hyperpod-dpd-system"},
        2,
        f"{NS}:endpoint.namespace",
    ),
    # 6. duplicates
    "two admin roles of one name": (
        {"eks.adminRoleArns": [ADMIN, "arn:aws:iam::444455556666:role/PlatformAdmin"]},
        2,
        f"{NS}:eks.adminRoleArns",
    ),
    "a role both admin and viewer": ({"eks.viewRoleArns": [ADMIN]}, 2, f"{NS}:eks.viewRoleArns"),
    # 7. loose types and bounds
    "'yes' as a boolean": ({"network.placementGroup": "yes"}, 2, f"{NS}:network.placementGroup"),
    "'no' as a boolean": ({"observability.enabled": "no"}, 2, f"{NS}:observability.enabled"),
    "a count as text": (
        {"instanceGroups.decode.instanceCount": "1"},
        2,
        f"{NS}:instanceGroups.decode.instanceCount",
    ),
    "a count as true": (
        {"instanceGroups.decode.instanceCount": True},
        2,
        f"{NS}:instanceGroups.decode.instanceCount",
    ),
    "a count over the API's limit": ({"instanceGroups.decode.instanceCount": 10000}, 2, "<= 6758"),
    "TP as a float": ({"endpoint.tensorParallelSize": 8.5}, 2, f"{NS}:endpoint.tensorParallelSize"),
    "operator 3.3 with the 3.2 add-on": (
        {"inferenceOperator.addonVersion": "v1.3.0-eksbuild.1"},
        2,
        f"{NS}:inferenceOperator.addonVersion",
    ),
    # 8. a token inside a longer value
    "token inside a header value": (
        {"endpoint.environmentVariables": {"EXTRA_HEADERS": f"Authorization: Bearer {TOKEN}"}},
        1,
        "environmentVariables.EXTRA_HEADERS",
    ),
    "token inside an image path": (
        # (lowercase: an image path is, distribution/reference)
        {
            "endpoint.image": f"registry.example/{TOKEN.lower()}/vllm:1",
            "endpoint.imageDpdCapable": True,
        },
        1,
        "hyperpod-dpd-hf-token",
    ),
    "plaintext HF_TOKEN": (
        {"endpoint.environmentVariables": {"HF_TOKEN": TOKEN}},
        1,
        "hyperpod-dpd-hf-token",
    ),
    # 10. images known to break DPD
    "LMCache 0.4.4": ({"endpoint.image": "lmcache/vllm-openai:v0.4.4"}, 1, "LMCache 0.4.4"),
    "NIXL 1.2.0": (
        {"endpoint.image": "registry.example/vllm:nixl-1.2.0", "endpoint.imageDpdCapable": True},
        1,
        "NIXL 1.2.0",
    ),
    # more of my own
    "routingThreshold 100": (
        {"endpoint.routingThreshold": 100},
        1,
        f"{NS}:endpoint.routingThreshold",
    ),
    "random hash seed": (
        {"endpoint.environmentVariables": {"PYTHONHASHSEED": "random"}},
        1,
        "hyperpod-dpd-hash-seed",
    ),
    "a g6e decode group": (
        {"instanceGroups.decode.instanceType": "ml.g6e.48xlarge"},
        1,
        f"{NS}:instanceGroups.decode.instanceType",
    ),
    "more decoders than decode nodes": (
        {"endpoint.decode.replicas": 3},
        2,
        f"{NS}:instanceGroups.decode.instanceCount",
    ),
    "AZ of another Region": ({"availabilityZoneId": "usw2-az1"}, 2, f"{NS}:availabilityZoneId"),
    "Kubernetes 1.34": ({"eks.kubernetesVersion": "1.34"}, 2, f"{NS}:eks.kubernetesVersion"),
    "a misspelt key": ({"endpont": {"name": "x"}}, 2, "did you mean 'hyperpod-dpd:endpoint'"),
    "a plaintext secret key": ({"hfToken": TOKEN}, 2, f"{NS}:hfToken"),
    "a branch as revision": ({"checkpoint.revision": "main"}, 2, f"{NS}:checkpoint.revision"),
    "an empty vLLM arg": ({"endpoint.decode.args": [""]}, 2, f"{NS}:endpoint.decode.args"),
    "a positional vLLM arg": (
        {"endpoint.prefill.args": ["serve"]},
        2,
        f"{NS}:endpoint.prefill.args",
    ),
}
# Broken as text: what no edit of a mapping can write.
BROKEN_TEXT: dict[str, tuple[str, str]] = {
    "a key given twice": (
        (ROOT / "Pulumi.dev.yaml").read_text() + "  aws:region: us-west-2\n",
        "given twice",
    ),
    "config as a list": ("config:\n  - aws:region\n  - us-east-2\n", "a mapping of keys"),
    "an unclosed quote": ('config:\n  aws:region: "us-east-2\n', "invalid YAML at line 3"),
    "an object as a list": (
        (ROOT / "Pulumi.dev.yaml").read_text() + "  hyperpod-dpd:cost: [1, 2]\n",
        f"{NS}:cost",
    ),
}
GOOD: dict[str, dict] = {
    "p5e groups": {"instanceGroups.prefill.instanceType": "ml.p5e.48xlarge",
                   "instanceGroups.decode.instanceType": "ml.p5e.48xlarge"},
    "p5en groups": {"instanceGroups.prefill.instanceType": "ml.p5en.48xlarge",
                    "instanceGroups.decode.instanceType": "ml.p5en.48xlarge"},
    "p6-b200 groups": {"instanceGroups.prefill.instanceType": "ml.p6-b200.48xlarge",
                       "instanceGroups.decode.instanceType": "ml.p6-b200.48xlarge"},
    "colocated": {"endpoint.mode": "colocated"},
    "several prefillers, roundrobin": {
        "instanceGroups.prefill.instanceCount": 3,
        "endpoint.prefill.replicas": 3,
        "endpoint.routingStrategy": "roundrobin",
    },
    "an s3 source": {"checkpoint.source": "s3://other-bucket/models/llama-3.3-70b"},
    "a local source, staged by hand": {
        "checkpoint.source": "./checkpoints/llama", "checkpoint.staging": "manual"
    },
    "a private API endpoint": {"eks.publicAccessCidrs": []},
    "observability off": {"observability.enabled": False},
    "a named bucket and prefix": {
        "checkpoint.bucketName": "acme-models-prod", "checkpoint.prefix": "llama/v1"
    },
}  # fmt: skip


def _plan(tmp_path, raw=None, text=None, capsys=None):
    project = write_project(tmp_path / "project", raw or {})
    if text is not None:
        (project / "Pulumi.dev.yaml").write_text(text)
    code = main(
        ["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(tmp_path / "o")]
    )
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _raw(edits: dict) -> dict:
    raw = stack_raw("dev")
    for key, value in edits.items():
        edit(raw, f"{NS}:{key}", value)
    return raw


def _refused_cleanly(code, output, expected_code, needle, tmp_path):
    assert code == expected_code, output
    assert needle in output, output
    assert "Traceback" not in output and "internal error" not in output
    if code == 1:  # stopped at the gate: nothing registered
        assert "0 resources were registered before the stop" in output
    else:  # refused before planning: nothing written
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_stack_file_is_refused(case, tmp_path, capsys):
    edits, expected_code, needle = BROKEN[case]
    code, output = _plan(tmp_path, _raw(edits), capsys=capsys)
    _refused_cleanly(code, output, expected_code, needle, tmp_path)


@pytest.mark.parametrize("case", sorted(BROKEN_TEXT))
def test_a_broken_stack_text_is_refused(case, tmp_path, capsys):
    text, needle = BROKEN_TEXT[case]
    code, output = _plan(tmp_path, text=text, capsys=capsys)
    _refused_cleanly(code, output, 2, needle, tmp_path)


@pytest.mark.parametrize("case", sorted(GOOD))
def test_a_good_stack_file_plans(case, tmp_path, capsys):
    code, output = _plan(tmp_path, _raw(GOOD[case]), capsys=capsys)
    assert code == 0, output


def test_a_secure_token_plans(tmp_path, capsys):
    text = (ROOT / "Pulumi.dev.yaml").read_text() + f"  {NS}:hfToken:\n    secure: v1:AAAA==\n"
    code, output = _plan(tmp_path, text=text, capsys=capsys)
    assert code == 0, output
    assert TOKEN not in output


def test_the_table_covers_enough_files():
    assert len(BROKEN) + len(BROKEN_TEXT) >= 40
    assert len(GOOD) + 1 >= 10  # + the secure token
    # Written by hand, each one a stack file a user could write: none reuses another's edit.
    seen = [yaml.safe_dump(e, sort_keys=True) for e, _, _ in BROKEN.values()]
    assert len(seen) == len(set(seen))
