"""The staging Job in the stack: scope of its role, identity, secret, and what waits for it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import edit, run_stack, stack_raw

NS = "hyperpod-dpd"
PREFIX = "models/meta-llama/Llama-3.3-70B-Instruct/6f6073b423013f6a7d4d9f39144961bfbfbc386b"


@pytest.fixture(scope="module")
def dev():
    return run_stack(stack_raw("dev"))


def job(run):
    (j,) = run.of_type("kubernetes:batch/v1:Job")
    return j


def test_role_writes_only_the_model_prefix(dev):
    bucket = dev.named("models-bucket").id
    statements = json.loads(dev.named("checkpoint-policy").inputs["policy"])["Statement"]
    writes = next(s for s in statements if "s3:PutObject" in s["Action"])
    assert writes["Resource"] == [f"arn:aws:s3:::{bucket}/{PREFIX}/*"]
    listing = next(s for s in statements if "s3:ListBucket" in s["Action"])
    assert listing["Condition"] == {"StringLike": {"s3:prefix": [PREFIX, f"{PREFIX}/*"]}}
    trust = json.loads(dev.named("checkpoint-role").inputs["assumeRolePolicy"])["Statement"][0]
    (sub,) = [v for k, v in trust["Condition"]["StringEquals"].items() if k.endswith(":sub")]
    assert sub == "system:serviceaccount:hyperpod-dpd-system:checkpoint-stager"


def test_job_runs_the_staging_cli_on_a_system_node(dev):
    spec = job(dev).inputs["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"hyperpod-dpd/role": "system"}
    assert spec["serviceAccountName"] == "checkpoint-stager"
    script = spec["containers"][0]["command"][2]
    bucket = dev.named("models-bucket").id
    assert f"'--dest' 's3://{bucket}/{PREFIX}'" in script
    assert "'--revision' '6f6073b423013f6a7d4d9f39144961bfbfbc386b'" in script
    # The pinned packages, each with its hash, from the Job's ConfigMap (specs/staging.py).
    install = "--require-hashes --no-deps --only-binary=:all: -r /code/requirements.txt"
    assert (
        f"pip install --user --quiet --no-cache-dir --disable-pip-version-check {install}" in script
    )
    (code,) = [
        c
        for c in dev.of_type("kubernetes:core/v1:ConfigMap")
        if c.inputs["metadata"]["name"] == "checkpoint-staging-code"
    ]
    requirements = code.inputs["data"]["requirements.txt"]
    assert "\nboto3==1.44.8 --hash=sha256:" in requirements
    assert "\nhuggingface_hub==2.4.0 --hash=sha256:" in requirements


def test_job_identity_follows_source_revision_and_prefix_only(dev):
    name = job(dev).inputs["metadata"]["name"]
    unrelated = run_stack(edit(stack_raw("dev"), f"{NS}:endpoint.routingThreshold", 8192))
    assert job(unrelated).inputs["metadata"]["name"] == name
    moved = run_stack(edit(stack_raw("dev"), f"{NS}:checkpoint.revision", "a" * 40))
    assert job(moved).inputs["metadata"]["name"] != name


def test_endpoint_waits_for_the_staged_checkpoint(dev):
    assert job(dev).urn in dev.named("endpoint-iec").depends_on


def test_token_reaches_the_job_as_a_secret_only():
    raw = stack_raw("dev") | {f"{NS}:hfToken": "hf_" + "x" * 34}
    run = run_stack(raw, secret_keys=[f"{NS}:hfToken"])
    (secret,) = run.of_type("kubernetes:core/v1:Secret")
    assert secret.inputs["stringData"] == "[secret]"
    pod = job(run).inputs["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    # Not an environment variable (pip and every child would inherit it): a file of a
    # read-only Secret volume that HF_TOKEN_PATH names, readable by the Job's user only.
    names = {e["name"] for e in container["env"]}
    assert not names & {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
    path = next(e["value"] for e in container["env"] if e["name"] == "HF_TOKEN_PATH")
    (mount,) = [m for m in container["volumeMounts"] if path.startswith(m["mountPath"] + "/")]
    assert mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == secret.inputs["metadata"]["name"]
    (item,) = volume["secret"]["items"]
    assert f"{mount['mountPath']}/{item['path']}" == path
    assert item["key"] in ("token",) and volume["secret"]["defaultMode"] == 0o400
    assert "hf_xxx" not in json.dumps([r.to_json() for r in run.resources])


def test_manual_staging_creates_no_job():
    raw = edit(stack_raw("dev"), f"{NS}:checkpoint.staging", "manual")
    run = run_stack(raw)
    assert not run.of_type("kubernetes:batch/v1:Job")
    assert not run.of_type("hyperpod-dpd:workloads:CheckpointStaging")


def test_local_source_requires_manual_staging():
    from settings import ConfigError, parse_settings

    raw = edit(stack_raw("dev"), f"{NS}:checkpoint", {"source": "/data/llama"})
    with pytest.raises(ConfigError, match=r"hyperpod-dpd:checkpoint\.staging: got 'job'"):
        parse_settings(raw)
