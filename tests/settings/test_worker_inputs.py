"""The endpoint's worker inputs the operator or Kubernetes would refuse or silently break
(settings/endpoint/worker_inputs.py check_worker_inputs), and a model file that is no model."""

from __future__ import annotations

import pytest

from tests.conftest import edit
from tests.settings.problems import only_problem

NS = "hyperpod-dpd"


@pytest.mark.parametrize("name", ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"])
def test_variables_the_pods_owners_set(dev_raw, name):
    edit(dev_raw, f"{NS}:endpoint.environmentVariables", {name: "0,1"})
    message = only_problem(dev_raw)
    assert message.startswith(f"hyperpod-dpd:endpoint.environmentVariables.{name}: got '0,1'")


@pytest.mark.parametrize("seed", ["-1", "4294967296", "0x10"])
def test_a_hash_seed_python_or_lmcache_cannot_use(dev_raw, seed):
    edit(dev_raw, f"{NS}:endpoint.environmentVariables", {"PYTHONHASHSEED": seed})
    assert "a seed from 0 to 4294967295" in only_problem(dev_raw)


def test_a_long_prefill_threshold_no_prompt_reaches(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.mode", "colocated")
    edit(dev_raw, f"{NS}:endpoint.colocated.longPrefillTokenThreshold", 20000)
    assert only_problem(dev_raw).startswith(
        "hyperpod-dpd:endpoint.colocated.longPrefillTokenThreshold: got 20000; allowed: at most "
        "maxModelLen (16384)"
    )


def test_an_endpoint_name_a_service_cannot_take(dev_raw):
    edit(dev_raw, f"{NS}:endpoint.name", "70b")
    assert only_problem(dev_raw).startswith("hyperpod-dpd:endpoint.name: got '70b'")


def test_a_model_file_that_is_not_a_model(dev_raw, tmp_path):
    binary = tmp_path / "config.json"
    binary.write_bytes(bytes(range(256)))
    edit(dev_raw, f"{NS}:endpoint.model", str(binary))
    message = only_problem(dev_raw)
    assert (
        message.startswith("hyperpod-dpd:endpoint.model: got")
        and "cannot read it as JSON" in message
    )
