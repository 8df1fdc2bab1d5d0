"""`benchmark run --stack S` without --target, what it asks the cluster to run
(hyperpod_dpd/benchmark/job.py): the Job's manifest (image and mirror, the shipped program
on the system nodes as the runner, the ConfigMap that carries it and goes with the Job),
the workload flags passed through as given, and what the Job's role may read and write."""

from __future__ import annotations

import argparse
import fnmatch
import re

from core.versions import JOB_PYTHON_IMAGE
from core.vocabulary import ROLE_LABEL
from hyperpod_dpd.benchmark import job as job_module
from hyperpod_dpd.benchmark.scenario import add_workload_flags, workload_argv
from tests.hyperpod_dpd.benchmark.job_factory import BUCKET_ARN, REGION, _run, _statements

CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")  # what the API server accepts as a ConfigMap key


def test_a_run_uses_the_stacks_image_and_mirror():
    run = _run(image="registry.internal/python:3.11-slim", pip_index_url="https://pypi.internal/s")
    (container,) = job_module.job(run, {})["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.internal/python:3.11-slim"
    assert {"name": "PIP_INDEX_URL", "value": "https://pypi.internal/s"} in container["env"]


def test_the_job_runs_the_shipped_program_on_the_system_nodes_as_the_runner():
    run = _run()
    manifest = job_module.job(run, job_module.code_files())
    spec = manifest["spec"]
    assert manifest["metadata"] == {
        "name": "benchmark-20261202-031500-a1b2", "namespace": "hyperpod-dpd-benchmark",
        "labels": {"hyperpod-dpd/benchmark": run.run_id},
    }  # fmt: skip
    assert spec["backoffLimit"] == 0  # a retry would send the load twice
    assert spec["activeDeadlineSeconds"] == 3600
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == "benchmark-runner"
    assert pod["nodeSelector"] == {ROLE_LABEL: "system"}
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["image"] == JOB_PYTHON_IMAGE
    shell, flag, script = container["command"]
    assert (shell, flag) == ("/bin/sh", "-c")
    assert "exec python -m hyperpod_dpd.benchmark.in_cluster --target" in script
    assert "--scenario 'D(4096,256)' --concurrency 8,16,32" in script
    assert {"name": "AWS_REGION", "value": REGION} in container["env"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
    }  # fmt: skip
    # A non-root pod can write its scratch volume only: the program, boto3 and the venv go there.
    (scratch,) = [m["mountPath"] for m in container["volumeMounts"] if m["name"] == "scratch"]
    assert "pip install --user" in script
    assert f"cd {scratch}/" in script
    assert {"name": "HOME", "value": f"{scratch}/home"} in container["env"]
    # Every shipped file is laid out at its path; every key is one the API server accepts.
    (code,) = [v for v in pod["volumes"] if v["name"] == "code"]
    items = code["configMap"]["items"]
    assert sorted(i["path"] for i in items) == sorted(job_module.CODE_FILES)
    config_map = job_module.config_map(run, job_module.code_files())
    assert code["configMap"]["name"] == config_map["metadata"]["name"]
    assert all(CONFIG_KEY.match(k) for k in config_map["data"])
    assert {i["key"] for i in items} == set(config_map["data"])


def test_the_job_takes_the_splits_api_key_from_the_stacks_secret_if_there_is_one():
    """A run aimed at the traffic split presents its key; the key comes from the Secret the
    stack keeps beside the endpoints (never the manifest), and a namespace without one (no
    split) starts the Job all the same."""
    (container,) = job_module.job(_run(), {})["spec"]["template"]["spec"]["containers"]
    (env,) = [e for e in container["env"] if e["name"] == "HYPERPOD_DPD_API_KEY"]
    assert env == {"name": "HYPERPOD_DPD_API_KEY", "valueFrom": {"secretKeyRef": {
        "name": "hyperpod-dpd-traffic-api-key", "key": "apiKey", "optional": True}}}  # fmt: skip


def test_the_job_writes_and_reads_only_what_its_role_allows():
    run = _run()
    statements = _statements()
    assert set(statements) == {"ReadTokenizer", "WriteResults"}
    (put,) = statements["WriteResults"]["Resource"]
    assert statements["WriteResults"]["Action"] == ["s3:PutObject", "s3:AbortMultipartUpload"]
    # Every object the Job uploads (results_prefix/...) is inside its one PutObject resource.
    assert fnmatch.fnmatch(f"{BUCKET_ARN}/{run.results_prefix}/results.json", put)
    assert not fnmatch.fnmatch(f"{BUCKET_ARN}/{run.tokenizer_prefix}/config.json", put)
    # It reads exactly the tokenizer files it asks for, none of the weights.
    reads = statements["ReadTokenizer"]["Resource"]
    assert reads == [f"{BUCKET_ARN}/{run.tokenizer_prefix}/{f}" for f in run.tokenizer_files]
    assert not any(r.endswith("*") or "safetensors" in r for r in reads)


def test_the_workload_flags_reach_the_job_as_given():
    parser = argparse.ArgumentParser()
    add_workload_flags(parser)
    given = parser.parse_args(
        ["--scenario", "D(512,64)", "--concurrency", "1,4", "--duration", "30", "--label", "a b"]
    )
    assert parser.parse_args(workload_argv(given)) == given


def test_the_owner_reference_makes_the_code_go_with_the_job():
    run = _run()
    created = {"metadata": {"name": run.name, "uid": "u-1"}}
    owned = job_module.owned_by(job_module.config_map(run, {}), created)
    assert owned["metadata"]["ownerReferences"] == [
        {"apiVersion": "batch/v1", "kind": "Job", "name": run.name, "uid": "u-1"}
    ]
