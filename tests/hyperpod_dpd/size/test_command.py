"""`hyperpod-dpd size` through the real CLI entry point (registered for the test only)."""

from __future__ import annotations

import json

import pytest

from core.sizing.catalog import GIB, instance_spec, load_model
from core.sizing.report import size
from hyperpod_dpd import cli
from hyperpod_dpd.cli import size as size_cmd
from tests.core.sizing.test_catalog import LLAMA_70B_CONFIG


def test_size_is_a_registered_command():
    assert size_cmd in cli.COMMANDS


def test_text_output_shows_the_docs_numbers(capsys):
    assert cli.main(["size"]) == 0
    out = capsys.readouterr().out
    assert (
        "llama-3.3-70b (meta-llama/Llama-3.3-70B-Instruct) on ml.p5.48xlarge (8 x H100), TP 8"
        in out
    )
    assert "KV per token               40,960 B" in out
    assert "256 tokens = 10,485,760 B (10 MiB)" in out
    assert "prompt of 6,035 tokens     24 chunks = 251,658,240 B (0.2344 GiB)" in out
    assert "8,589,934,592 B = 819 chunks (LMCache rounds down: 2 MiB idle)" in out
    assert "34 in whole chunks" in out and "= 34.75 ~ 35" in out
    assert "headroom                   18.00 GiB   10.00 GiB" in out


def test_json_output_equals_the_report(capsys):
    argv = ["size", "--format", "json", "--instance-type", "ml.p5en.48xlarge", "--tp", "4"]
    argv += ["--prompt-tokens", "8000", "--pd-buffer", "16GiB", "--in-flight", "20"]
    argv += ["--gpu-memory-utilization", "0.8", "--max-model-len", "32768"]
    assert cli.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    expected = size(
        load_model("llama-3.3-70b"),
        instance_spec("ml.p5en.48xlarge"),
        tp=4,
        prompt_tokens=8000,
        pd_buffer_bytes=16 * GIB,
        gpu_memory_utilization=0.8,
        max_model_len=32768,
        in_flight=20,
    )
    assert doc == expected.to_json()
    # TP 4: two KV heads per rank, 20 MiB chunks; 20 x 32 chunks x 20 MiB = 12.5 GiB -> 13 GiB.
    assert doc["kvBytesPerTokenPerRank"] == 81_920 and doc["recommendedPdBufferBytes"] == 13 * GIB


def test_model_from_a_config_json(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA_70B_CONFIG))
    assert cli.main(["size", "--model", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["kvBytesPerTokenPerRank"] == 40_960


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--tp", "3"], "--tp: got 3; allowed: does not divide"),
        (["--tp", "16"], "--tp: got 16; allowed: must be between 1 and the 8 GPUs"),
        (["--model", "gpt-5"], "--model: got 'gpt-5'; allowed: not a catalog model"),
        (["--instance-type", "ml.g6e.48xlarge"], "--instance-type: got 'ml.g6e.48xlarge'"),
        (["--pd-buffer", "8 gigs"], "--pd-buffer: got '8 gigs'; allowed: not a valid byte size"),
        (["--gpu-memory-utilization", "1.2"], "--gpu-memory-utilization: got 1.2;"),
        (["--prompt-tokens", "20000"], "--prompt-tokens: got 20000; allowed: must be between 1"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(capsys, argv, expected):
    assert cli.main(["size", *argv]) == 2
    captured = capsys.readouterr()
    assert expected in captured.err
    assert captured.out == "" and "Traceback" not in captured.err


def test_a_non_number_is_refused_by_argparse_with_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["size", "--tp", "eight"])
    assert exc.value.code == 2
    assert "--tp: invalid int value: 'eight'" in capsys.readouterr().err


def test_a_worker_that_cannot_start_is_an_error_with_the_plans_advice(capsys):
    assert cli.main(["size", "--tp", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "decode workers cannot start: llama-3.3-70b at TP 1 needs" in captured.err
    assert "raise --tp to 4" in captured.err  # the smallest TP that works, not the node's 8
    # The advice works: at TP 4 the same flags size.
    assert cli.main(["size", "--tp", "4"]) == 0


def test_weights_that_fit_no_share_get_no_utilization_advice(capsys):
    assert cli.main(["size", "--model", "llama-3.1-405b"]) == 2
    err = capsys.readouterr().err
    assert "the weights alone do not fit: llama-3.1-405b at TP 8 is 94.5 GiB per GPU" in err
    assert "raise --gpu-memory-utilization" not in err
    assert "set --instance-type to one with more memory per GPU: ml.p5e.48xlarge" in err
    assert (
        cli.main(["size", "--model", "llama-3.1-405b", "--instance-type", "ml.p5e.48xlarge"]) == 0
    )


def test_a_utilization_too_small_for_the_weights_names_the_range_that_works(capsys):
    assert cli.main(["size", "--gpu-memory-utilization", "0.2"]) == 2
    err = capsys.readouterr().err
    assert "set --gpu-memory-utilization between 0.27 and 0.87" in err


def test_a_misspelled_flag_is_the_commands_error_with_the_flag_it_meant(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["size", "--tps", "8"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "hyperpod-dpd size: error: unrecognized arguments: --tps 8" in err
    assert "--tps: did you mean --tp?" in err


def test_the_defaults_and_the_shipped_stacks_raise_no_warning_of_their_own_buffer(capsys, tmp_path):
    """One judgement of the PD buffer's chunks, the same in `size` and `plan`: the docs' 8 GiB
    (819 chunks and 2 MiB LMCache leaves idle) warns in neither, and both say it alike."""
    assert cli.main(["size", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []
    assert cli.main(["size"]) == 0
    said = "8,589,934,592 B = 819 chunks (LMCache rounds down: 2 MiB idle)"
    assert said in capsys.readouterr().out
    assert cli.main(["plan", "--stack", "dev", "--out", str(tmp_path)]) == 0
    summary = (tmp_path / "summary.md").read_text()
    assert "| PD buffer | 8 GiB = 819 chunks (LMCache rounds down: 2 MiB idle) |" in summary
    assert "chunk" not in "".join(v.lower() for v in _violations(tmp_path))


def _violations(plan_dir) -> list[str]:
    report = json.loads((plan_dir / "policy-report.json").read_text())
    return [v["message"] for v in report["violations"]]


@pytest.mark.parametrize(("max_model_len", "assumed"), [(2048, 2048), (16384, 6035)])
def test_without_prompt_tokens_the_prompt_fits_the_context_as_the_stack_assumes_it(
    capsys, max_model_len, assumed
):
    """--prompt-tokens left out: the docs' example, or the whole context when that is shorter
    (the settings assume the same for an unset endpoint.expectedPromptTokens), never a refusal
    naming a flag the user did not give."""
    argv = ["size", "--format", "json", "--max-model-len", str(max_model_len)]
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["promptTokens"] == assumed
