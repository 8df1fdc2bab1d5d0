"""core/vllm/vllm_flags.json: what scripts/extract_vllm_args.py makes of vLLM's recorded source."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from core.versions import WORKER_VLLM_VERSION
from core.vllm.vllm_flags import canonical, vllm_aliases, vllm_flags, vllm_version
from scripts import extract_vllm_args as script

RECORDED = Path(__file__).with_name("vllm_source")


def test_the_committed_flags_are_what_the_script_extracts_from_the_recorded_source(capsys):
    assert script.main(["--check"]) == 0, capsys.readouterr().err


def test_the_recorded_source_is_the_one_the_flags_name():
    texts = script.read_sources(RECORDED)
    data = script.extract(texts, WORKER_VLLM_VERSION)
    for path, digest in data["source"].items():
        body = gzip.decompress((RECORDED / (Path(path).name + ".gz")).read_bytes())
        assert hashlib.sha256(body).hexdigest() == digest


def test_the_flags_are_the_pinned_images_vllm():
    assert vllm_version() == WORKER_VLLM_VERSION


def test_what_each_flag_takes_follows_vllms_argparse_setup():
    flags = vllm_flags()
    assert flags["--tensor-parallel-size"] == "one"
    assert flags["--enforce-eager"] == flags["--no-enforce-eager"] == "none"  # BooleanOptional
    assert flags["--disable-log-stats"] == "none" and "--no-disable-log-stats" not in flags
    assert flags["--served-model-name"] == "several"  # list[str]: nargs '+'
    assert flags["--hf-token"] == "optional"  # nargs '?'
    assert flags["--middleware"] == flags["--allowed-origins"] == "one"  # customised
    assert flags["--host"] == flags["--port"] == "one"  # the server's own (cli_args.py)
    assert vllm_aliases()["-tp"] == "--tensor-parallel-size"
    assert "--tensor-paralell-size" not in flags


def test_vllm_reads_underscores_as_dashes_up_to_a_dotted_sub_key():
    assert canonical("--tensor_parallel_size") == "--tensor-parallel-size"
    assert canonical("--compilation_config.cudagraph_mode") == "--compilation-config"


def test_the_default_step_budget_is_the_pinned_vllm_s_for_the_gpu():
    """vllm serve's default --max-num-batched-tokens (EngineArgs.get_batch_defaults, extracted
    from the recorded source): 8192 on a GPU of 70 GiB or more, except A100s; else 2048."""
    from core.sizing.gpu_types import gpu_spec
    from core.vllm.vllm_flags import default_batched_tokens

    def on(instance_type: str) -> int:
        spec = gpu_spec(instance_type)
        return default_batched_tokens(spec.gpu_memory_mib, spec.gpu_model)

    assert on("ml.p5.48xlarge") == on("ml.p5e.48xlarge") == 8192  # H100 80 GiB, H200
    assert on("ml.p4de.24xlarge") == 2048  # A100 80 GiB: vllm-project/vllm#17885
    assert on("ml.g6e.12xlarge") == 2048  # L40S 48 GiB
