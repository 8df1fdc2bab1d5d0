"""`--endpoint KEY` of the Day-2 commands: which endpoint of a stack, refused naming the flag,
the value and the keys; the facts a benchmark records about it."""

from __future__ import annotations

import argparse

import pytest

from core.exits import UsageProblem
from hyperpod_dpd.benchmark.run import endpoint_facts, stack_settings
from hyperpod_dpd.cli import main
from hyperpod_dpd.shared.endpoints import choose_endpoint
from hyperpod_dpd.verify.command import resolve_target
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def canary():
    return stack_settings(ROOT, "canary")


@pytest.fixture(scope="module")
def dev():
    return stack_settings(ROOT, "dev")


def test_several_endpoints_need_a_known_key(canary):
    assert choose_endpoint(canary, "canary", "candidate").key == "candidate"
    with pytest.raises(UsageProblem) as err:
        choose_endpoint(canary, "canary", None)
    assert "--endpoint" in str(err.value) and "baseline, candidate" in str(err.value)
    with pytest.raises(UsageProblem) as err:
        choose_endpoint(canary, "canary", "canddiate")
    assert "--endpoint: got 'canddiate'" in str(err.value) and "baseline, candidate" in str(
        err.value
    )


def test_a_single_endpoint_takes_no_key_or_its_name(dev):
    assert choose_endpoint(dev, "dev", None).key is None
    assert choose_endpoint(dev, "dev", "llama-3-3-70b").config.name == "llama-3-3-70b"
    with pytest.raises(UsageProblem) as err:
        choose_endpoint(dev, "dev", "candidate")
    assert "--endpoint: got 'candidate'" in str(err.value) and "--endpoint llama-3-3-70b" in str(
        err.value
    )


def test_each_endpoint_records_its_own_gpus_and_nodes_cost(canary, dev):
    baseline = endpoint_facts(canary, "canary", choose_endpoint(canary, "canary", "baseline"))
    candidate = endpoint_facts(canary, "canary", choose_endpoint(canary, "canary", "candidate"))
    assert baseline["endpoint"] == "baseline" and baseline["mode"] == "colocated"
    assert baseline["replicas"] == "2" and baseline["gpus"] == 16
    assert candidate["mode"] == "dpd" and candidate["replicas"] == "1/1"
    assert candidate["gpusPerPool"] == {"prefill": 8, "decode": 8}
    assert candidate["roleTensorParallelSize"] == {"prefill": 8, "decode": 8}
    # Two p5.48xlarge each: the endpoint's nodes, not the whole stack twice.
    assert candidate["hourlyCostUsd"] == baseline["hourlyCostUsd"] == 110.08
    assert candidate["stackHourlyCostUsd"] > candidate["hourlyCostUsd"]
    single = endpoint_facts(dev, "dev")
    assert "endpoint" not in single and single["gpus"] == 16 and single["hourlyCostUsd"] > 110.08


def _verify_args(**given) -> argparse.Namespace:
    fields = dict(stack="canary", endpoint=None, name=None, namespace=None,
                  routing_threshold=None, traffic_url=None)  # fmt: skip
    return argparse.Namespace(**(fields | given))


def test_verify_checks_the_chosen_endpoint_dpd_or_colocated():
    target = resolve_target(_verify_args(endpoint="candidate"), ROOT)
    assert (target.name, target.namespace, target.fallback_threshold) == (
        "candidate", "inference", 4096,
    )  # fmt: skip
    baseline = resolve_target(_verify_args(endpoint="baseline"), ROOT)
    assert baseline.colocated and not target.colocated  # its router Service alone is checked
    with pytest.raises(UsageProblem, match=r"--endpoint 'candidate': .*--stack"):
        resolve_target(_verify_args(stack=None, endpoint="candidate"), ROOT)
    dev = resolve_target(_verify_args(stack="dev"), ROOT)
    assert dev.name == "llama-3-3-70b"
    # Both canary endpoints are behind its split, called by the name the stack gives it.
    url = "https://llm.internal.example.com/v1/chat/completions"
    assert target.split.url == baseline.split.url == url and dev.split is None


def test_verify_of_several_endpoints_without_a_key_is_exit_2(capsys):
    assert main(["verify", "--stack", "canary", "--project-dir", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert "--endpoint" in err and "baseline, candidate" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "names"),
    [
        (
            [],
            "--endpoint: not set; allowed: one of the keys of stack canary's endpoints "
            "(hyperpod-dpd:endpoints: baseline, candidate)",
        ),
        (["--endpoint", "nope"], "--endpoint: got 'nope'"),
    ],
)
def test_benchmark_run_of_several_endpoints_needs_a_key(tmp_path, capsys, extra, names):
    tk = tmp_path / "tk"
    tk.mkdir()
    (tk / "tokenizer.json").write_text("{}")
    argv = ["benchmark", "run", "--target", "http://x", "--tokenizer", str(tk), "--stack",
            "canary", "--project-dir", str(ROOT), "--out", str(tmp_path / "out"), *extra]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert names in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_benchmark_run_endpoint_without_stack_and_bad_gpus_are_exit_2(tmp_path, capsys):
    tk = tmp_path / "tk"
    tk.mkdir()
    (tk / "tokenizer.json").write_text("{}")
    base = ["benchmark", "run", "--target", "http://x", "--tokenizer", str(tk),
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main([*base, "--endpoint", "candidate"]) == 2
    assert "--endpoint: got 'candidate'" in capsys.readouterr().err
    assert main([*base, "--gpus", "0"]) == 2
    assert "--gpus: got 0" in capsys.readouterr().err


def _dry_run(tmp_path, monkeypatch, capsys, cluster, endpoint: str):
    import yaml

    monkeypatch.setattr("hyperpod_dpd.shared.kube.Cluster.from_kubeconfig", lambda *a, **k: cluster)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\n")
    argv = ["benchmark", "run", "--stack", "canary", "--endpoint", endpoint, "--project-dir",
            str(ROOT), "--bucket", "b", "--kubeconfig", str(kubeconfig),
            "--out", str(tmp_path / "out"), "--dry-run"]  # fmt: skip
    assert main(argv) == 0
    job, _ = yaml.safe_load_all(capsys.readouterr().out)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container["command"][2]


def test_an_in_cluster_run_aims_at_the_chosen_endpoint(tmp_path, monkeypatch, capsys):
    from tests.hyperpod_dpd.benchmark.fake_cluster import FakeCluster

    cluster = FakeCluster(tmp_path, {})  # the routers of the canary's endpoints exist
    command = _dry_run(tmp_path, monkeypatch, capsys, cluster, "candidate")
    # The candidate's router; the facts recorded are the candidate's.
    assert "--target http://candidate-inference-routing-service." in command
    assert '"endpoint": "candidate"' in command and '"gpus": 16' in command
    command = _dry_run(tmp_path, monkeypatch, capsys, cluster, "baseline")
    assert "--target http://baseline-inference-routing-service.hyperpod-inference-system." in (
        command
    )
    assert cluster.jobs == {}
