"""`benchmark run --stack S` without --target: what is checked before anything is created (the
stack, the bucket, the kubeconfig, the runner's account, a system node that holds the Job), and
`--dry-run`, which runs every check and prints the Job instead of creating it."""

from __future__ import annotations

import argparse
import shlex

import yaml

from hyperpod_dpd.benchmark import cluster_run as cluster_run_module
from hyperpod_dpd.cli import main
from settings import parse_settings
from specs.benchmark import TOKENIZER_FILES, benchmark_access
from tests.conftest import NEW_REVISION, ROOT, canary_revision_raw, edit, stack_raw, write_project
from tests.hyperpod_dpd.benchmark.fake_cluster import FakeCluster
from tests.security.iam import Request, allows


def _in_cluster_argv(project, tmp_path, *extra: str) -> list[str]:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    return ["benchmark", "run", "--stack", "dev", "--project-dir", str(project), "--bucket", "b",
            "--kubeconfig", str(kubeconfig), "--out", str(tmp_path / "out"), *extra]  # fmt: skip


def test_the_bucket_comes_from_the_stack_outputs_or_the_error_names_bucket(
    tmp_path, monkeypatch, capsys
):
    shims = tmp_path / "bin"
    shims.mkdir()
    pulumi = shims / "pulumi"
    pulumi.write_text("#!/bin/sh\necho \"error: no stack named 'dev' found\" >&2\nexit 255\n")
    pulumi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:/usr/bin:/bin")
    out = tmp_path / "out"
    argv = ["benchmark", "run", "--stack", "dev", "--project-dir", str(ROOT), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--bucket" in err and "no stack named 'dev' found" in err and "Traceback" not in err
    pulumi.write_text("#!/bin/sh\necho models-bkt-123\n")
    settings = parse_settings(stack_raw("dev"))
    args = argparse.Namespace(bucket=None, stack="dev")
    assert cluster_run_module.model_bucket(args, settings, ROOT) == "models-bkt-123"
    assert not out.exists()


def test_without_the_pulumi_cli_the_error_says_so_and_how_to_give_the_bucket(
    tmp_path, monkeypatch, capsys
):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    out = tmp_path / "out"
    argv = ["benchmark", "run", "--stack", "dev", "--project-dir", str(ROOT), "--out", str(out),
            "--dry-run"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the Pulumi CLI, which is not installed here (no `pulumi` on PATH)" in err
    assert "pass --bucket NAME" in err
    assert "Errno" not in err and "None" not in err and not out.exists()


def test_no_kubeconfig_is_bad_input_before_anything_is_created(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    argv = ["benchmark", "run", "--stack", "dev", "--project-dir", str(ROOT), "--bucket", "b",
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--kubeconfig" in err and "aws eks update-kubeconfig" in err


def test_a_cluster_without_the_runner_account_is_refused_before_a_job_exists(
    tmp_path, monkeypatch, capsys
):
    cluster = FakeCluster(tmp_path, {})
    cluster.service_accounts.clear()  # a stack deployed before the benchmark runner existed
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    assert main(_in_cluster_argv(ROOT, tmp_path, "--service", "http://x:1")) == 2
    err = capsys.readouterr().err
    assert "hyperpod-dpd-benchmark/benchmark-runner" in err and "run `pulumi up --stack dev`" in err
    assert cluster.jobs == {} and cluster.closed


def test_a_dry_run_checks_everything_prints_the_job_and_creates_nothing(
    tmp_path, monkeypatch, capsys
):
    cluster = FakeCluster(tmp_path, {})
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    argv = _in_cluster_argv(ROOT, tmp_path, "--dry-run")
    assert main(argv) == 0
    job, config_map = yaml.safe_load_all(capsys.readouterr().out)
    assert job["kind"] == "Job" and config_map["kind"] == "ConfigMap"
    (container,) = job["spec"]["template"]["spec"]["containers"]
    # The DPD router, as the operator names it: the Job's target with no --service given.
    assert "--target http://llama-3-3-70b-inference-routing-service." in container["command"][2]
    assert cluster.jobs == {} and cluster.config_maps == {} and cluster.closed
    assert not (tmp_path / "out").exists()
    cluster.service_accounts.clear()  # and the checks still run: no runner, no dry run
    assert main(argv) == 2


def test_a_run_of_a_private_clusters_stack_uses_its_image_and_mirror(tmp_path, monkeypatch, capsys):
    raw = stack_raw("dev")
    raw["hyperpod-dpd:jobs"] = {
        "image": "registry.internal/python:3.11-slim", "pipIndexUrl": "https://pypi.internal/s"
    }  # fmt: skip
    project = write_project(tmp_path / "project", raw)
    cluster = FakeCluster(tmp_path, {})
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    assert main(_in_cluster_argv(project, tmp_path, "--dry-run")) == 0
    job, _ = yaml.safe_load_all(capsys.readouterr().out)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.internal/python:3.11-slim"
    assert {"name": "PIP_INDEX_URL", "value": "https://pypi.internal/s"} in container["env"]


def test_a_system_group_too_small_for_the_job_is_refused_before_the_cluster_is_asked(
    tmp_path, monkeypatch, capsys
):
    """With checkpoint.staging manual the stack itself runs no Job, so its system group may be
    small; the benchmark Job requests 4 CPU and 8 GiB of it and would stay Pending."""
    raw = edit(stack_raw("dev"), "hyperpod-dpd:checkpoint.staging", "manual")
    edit(raw, "hyperpod-dpd:instanceGroups.system.instanceType", "ml.m5.xlarge")
    project = write_project(tmp_path / "project", raw)
    asked = []
    monkeypatch.setattr(
        "hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: asked.append(a)
    )
    assert main(_in_cluster_argv(project, tmp_path, "--dry-run")) == 2
    err = capsys.readouterr().err
    assert "hyperpod-dpd:instanceGroups.system.instanceType: got 'ml.m5.xlarge'" in err
    assert "hold the benchmark Job's requests (4 CPU, 8 GiB" in err
    assert "3920m CPU" in err and "ml.m5.2xlarge" in err
    assert asked == [] and not (tmp_path / "out").exists()
    # The fix printed, applied: the same run gets past the check.
    edit(raw, "hyperpod-dpd:instanceGroups.system.instanceType", "ml.m5.2xlarge")
    write_project(tmp_path / "project", raw)
    cluster = FakeCluster(tmp_path, {})
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    assert main(_in_cluster_argv(project, tmp_path, "--dry-run")) == 0
    job, _ = yaml.safe_load_all(capsys.readouterr().out)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["cpu"] == "4"
    assert container["resources"]["requests"]["memory"] == "8Gi"


def test_a_run_of_an_endpoint_with_its_own_checkpoint_reads_its_own_tokenizer(
    tmp_path, monkeypatch, capsys
):
    """The canary's candidate serves a new revision (its own checkpoint): the Job reads the
    tokenizer of that copy, the baseline's run the stack's, and the runner role the stack
    renders may read both (by exact key)."""
    project = write_project(tmp_path / "project", canary_revision_raw(), "canary")
    cluster = FakeCluster(tmp_path, {})
    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    policy = benchmark_access("benchmark", parse_settings(canary_revision_raw()), "arn:b").policy
    prefixes = {}
    for key in ("candidate", "baseline"):
        argv = _in_cluster_argv(project, tmp_path, "--dry-run", "--endpoint", key)
        argv[argv.index("dev")] = "canary"
        assert main(argv) == 0
        job, _ = yaml.safe_load_all(capsys.readouterr().out)
        (container,) = job["spec"]["template"]["spec"]["containers"]
        words = shlex.split(container["command"][2])
        prefixes[key] = words[words.index("--tokenizer-prefix") + 1]
        for name in TOKENIZER_FILES:
            wanted = Request("s3:GetObject", f"arn:b/{prefixes[key]}/{name}")
            assert allows(policy.props["policy"], wanted), wanted
    model = "models/meta-llama/Llama-3.3-70B-Instruct"
    assert prefixes == {
        "candidate": f"{model}/{NEW_REVISION}",
        "baseline": f"{model}/6f6073b423013f6a7d4d9f39144961bfbfbc386b",
    }
