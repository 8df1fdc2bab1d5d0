"""A number given through environmentVariables or a role's args is the number the plan shows:
summary.md, plan.json and `hyperpod-dpd diff` read the effective numbers (settings/endpoint/numbers.py),
and an override the typed key would refuse stops the plan as the typed key does, naming where
it was given."""

from __future__ import annotations

import json

import pytest
import yaml

from hyperpod_dpd.cli import main
from tests.conftest import ROOT, edit, stack_raw, write_project

NS = "hyperpod-dpd"
E = f"{NS}:endpoint"
ENV_KEY = f"{E}.environmentVariables.PD_BUFFER_SIZE"
DECODE_ARGS = f"{E}.decode.args"
IEC = "inferenceendpointconfig.inference.llama-3-3-70b.yaml"


def _plan(tmp_path, name, *edits):
    raw = stack_raw("dev")
    for key, value in edits:
        edit(raw, key, value)
    project = write_project(tmp_path / name / "project", raw)
    out = tmp_path / name / "plan"
    code = main(["plan", "--stack", "dev", "--project-dir", str(project), "--out", str(out)])
    return code, out


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    out = tmp_path_factory.mktemp("numbers") / "base"
    assert main(["plan", "--stack", "dev", "--project-dir", str(ROOT), "--out", str(out)]) == 0
    return out


def _numbers(out):
    return json.loads((out / "plan.json").read_text())["numbers"]["llama-3-3-70b"]


def test_a_pd_buffer_size_in_environment_variables_is_the_one_the_plan_shows(
    base, tmp_path, capsys
):
    code, out = _plan(tmp_path, "env", (f"{E}.environmentVariables", {"PD_BUFFER_SIZE": "4GiB"}))
    assert code == 0  # an advisory: 17 transfers in flight, 32 assumed
    summary = (out / "summary.md").read_text()
    assert f"| PD buffer | 4 GiB per TP rank ({ENV_KEY}) |" in summary
    assert "| PD buffer | 4 GiB = 409 chunks (LMCache rounds down: 6 MiB idle) |" in summary
    assert _numbers(out)["pdBufferSize"] == {"value": 4 * 2**30, "from": ENV_KEY}
    assert _numbers(base)["pdBufferSize"] == {"value": 8 * 2**30, "from": f"{E}.pdBufferSize"}
    manifest = yaml.safe_load((out / "manifests" / IEC).read_text())
    env = {e["name"]: e["value"] for e in manifest["spec"]["worker"]["environmentVariables"]}
    assert env["PD_BUFFER_SIZE"] == str(4 * 2**30)  # bytes, as pdBufferSize renders it
    capsys.readouterr()
    assert main(["diff", str(base), str(out), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert f"number llama-3-3-70b pdBufferSize: 8 GiB -> 4 GiB ({ENV_KEY})" in text
    assert "sizing pdBufferChunks: 819 -> 409" in text


def test_numbers_in_the_decoders_args_are_the_ones_the_plan_shows(base, tmp_path, capsys):
    args = ["--gpu-memory-utilization", "0.8", "--max-model-len=8192"]
    code, out = _plan(tmp_path, "args", (DECODE_ARGS, args))
    assert code == 0
    summary = (out / "summary.md").read_text()
    assert (
        f"max-model-len prefill 16384, decode 8192 (--max-model-len in {DECODE_ARGS}), "
        f"gpu-memory-utilization prefill 0.75, decode 0.8 (--gpu-memory-utilization in "
        f"{DECODE_ARGS})" in summary
    )
    assert "decode 6.00 GiB |" in summary  # the headroom at 0.8, not at the typed 0.75
    decode, prefill = _numbers(out)["decode"], _numbers(out)["prefill"]
    assert decode["gpuMemoryUtilization"] == {
        "value": 0.8,
        "from": f"--gpu-memory-utilization in {DECODE_ARGS}",
    }
    assert decode["maxModelLen"] == {"value": 8192, "from": f"--max-model-len in {DECODE_ARGS}"}
    assert prefill["maxModelLen"] == {"value": 16384, "from": f"{E}.maxModelLen"}
    capsys.readouterr()
    assert main(["diff", str(base), str(out), "--format", "json"]) == 0
    numbers = json.loads(capsys.readouterr().out)["numbers"]
    assert numbers == {
        "llama-3-3-70b decode gpuMemoryUtilization": {
            "base": 0.75,
            "head": 0.8,
            "from": f"--gpu-memory-utilization in {DECODE_ARGS}",
        },
        "llama-3-3-70b decode maxModelLen": {
            "base": 16384,
            "head": 8192,
            "from": f"--max-model-len in {DECODE_ARGS}",
        },
    }


@pytest.mark.parametrize(
    ("typed", "override", "named"),
    [
        ((f"{E}.pdBufferSize", "lots"), (f"{E}.environmentVariables", {"PD_BUFFER_SIZE": "lots"}),
         ENV_KEY),
        ((f"{E}.pdBufferSize", "512GiB"),
         (f"{E}.environmentVariables", {"PD_BUFFER_SIZE": "512GiB"}), ENV_KEY),
        ((f"{E}.gpuMemoryUtilization", 1.5), (DECODE_ARGS, ["--gpu-memory-utilization", "1.5"]),
         DECODE_ARGS),
        ((f"{E}.gpuMemoryUtilization", 0.9), (DECODE_ARGS, ["--gpu-memory-utilization=0.9"]),
         DECODE_ARGS),
        ((f"{E}.maxModelLen", 0), (DECODE_ARGS, ["--max-model-len=0"]), DECODE_ARGS),
    ],
    ids=["pd-buffer-word", "pd-buffer-beyond-the-gpu", "utilization-above-1",
         "utilization-too-high-for-the-buffer", "max-model-len-0"],
)  # fmt: skip
def test_an_override_stops_the_plan_as_its_typed_key_does_naming_where_it_was_given(
    tmp_path, capsys, typed, override, named
):
    typed_code, _ = _plan(tmp_path, "typed", typed)
    capsys.readouterr()
    code, _ = _plan(tmp_path, "override", override)
    captured = capsys.readouterr()
    assert code == typed_code and code in (1, 2)  # 2: config, as the key's; 1: a policy, alike
    assert named in captured.out + captured.err
    assert "Traceback" not in captured.out + captured.err
