"""Model and instance catalogs: built-in numbers, config.json loading, errors, moto cross-check."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import moto
import pytest

from core.sizing.catalog import (
    DPD_INSTANCE_TYPES,
    INSTANCES,
    MODELS,
    ModelSpec,
    SizingError,
    instance_spec,
    load_model,
)

# meta-llama/Llama-3.3-70B-Instruct config.json (the fields the loader reads, as published).
LLAMA_70B_CONFIG = {
    "_name_or_path": "meta-llama/Llama-3.3-70B-Instruct",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "num_attention_heads": 64,
    "num_hidden_layers": 80,
    "num_key_value_heads": 8,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}
# mistralai/Mixtral-8x7B-v0.1 config.json: 8 experts, 46.7B parameters in total.
MIXTRAL_CONFIG = {
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 32000,
}


def _write(tmp_path: Path, config: dict, name: str = "Llama-3.3-70B-Instruct") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    path = directory / "config.json"
    path.write_text(json.dumps(config))
    return path


def test_builtin_models_have_the_published_architectures():
    llama = MODELS["llama-3.3-70b"]
    assert (llama.num_layers, llama.num_attention_heads, llama.num_kv_heads) == (80, 64, 8)
    assert (llama.head_dim, llama.bytes_per_element, llama.num_params) == (128, 2, 70.6e9)
    assert not llama.moe
    shape = {
        name: (m.num_layers, m.num_attention_heads, m.num_kv_heads, m.head_dim, m.num_params)
        for name, m in MODELS.items()
    }
    assert shape["llama-3.1-8b"] == (32, 32, 8, 128, 8.03e9)
    assert shape["llama-3.1-405b"] == (126, 128, 8, 128, 405.9e9)
    assert shape["qwen2.5-72b"] == (80, 64, 8, 128, 72.7e9)
    # config.json intermediate_size and hidden_size (= heads x head_dim for all four)
    mlp = {name: (m.hidden, m.mlp_width) for name, m in MODELS.items()}
    assert mlp == {
        "llama-3.3-70b": (8192, 28672),
        "llama-3.1-8b": (4096, 14336),
        "llama-3.1-405b": (16384, 53248),
        "qwen2.5-72b": (8192, 29568),
    }


def test_a_config_json_gives_the_same_architecture_as_the_catalog(tmp_path):
    from_file = load_model(_write(tmp_path, LLAMA_70B_CONFIG))
    builtin = load_model("llama-3.3-70b")
    for attr in ("num_layers", "num_attention_heads", "num_kv_heads", "head_dim"):
        assert getattr(from_file, attr) == getattr(builtin, attr), attr
    assert from_file.bytes_per_element == 2
    assert (from_file.hidden, from_file.mlp_width) == (builtin.hidden, builtin.mlp_width)
    assert from_file.hf_id == "meta-llama/Llama-3.3-70B-Instruct"
    assert from_file.name == "Llama-3.3-70B-Instruct"
    # Estimated from the shapes: within 0.1% of the model card's 70.6B.
    assert from_file.num_params == pytest.approx(70.6e9, rel=1e-3)


def test_a_model_directory_is_read_through_its_config_json(tmp_path):
    path = _write(tmp_path, LLAMA_70B_CONFIG)
    assert load_model(path.parent) == load_model(path)


def test_config_json_fallbacks(tmp_path):
    config = dict(LLAMA_70B_CONFIG)
    del config["num_key_value_heads"]  # no GQA: one KV head per attention head
    del config["torch_dtype"]
    config["dtype"] = "float16"  # transformers >= 4.56 spelling
    config["head_dim"] = 64  # stated head_dim wins over hidden_size / heads
    model = load_model(_write(tmp_path, config))
    assert model.num_kv_heads == 64
    assert model.head_dim == 64
    assert model.bytes_per_element == 2


def test_multimodal_config_reads_text_config(tmp_path):
    config = {"architectures": ["X"], "text_config": LLAMA_70B_CONFIG}
    assert load_model(_write(tmp_path, config)).num_layers == 80


def test_moe_config_is_flagged_and_counts_all_experts(tmp_path):
    model = load_model(_write(tmp_path, MIXTRAL_CONFIG, "Mixtral-8x7B"))
    assert model.moe
    assert model.num_params == pytest.approx(46.7e9, rel=2e-3)
    # A token goes through num_experts_per_tok (2) experts of 14336 each.
    assert model.mlp_width == 2 * 14336


def test_an_unknown_mlp_width_is_taken_as_four_times_hidden():
    model = ModelSpec("m", "x/m", 4, 16, 4, 64, 2, 1e9)
    assert (model.hidden, model.mlp_width) == (1024, 4096)


@pytest.mark.parametrize("missing", ["num_hidden_layers", "num_attention_heads", "torch_dtype"])
def test_config_json_missing_field_names_field_and_file(tmp_path, missing):
    config = {k: v for k, v in LLAMA_70B_CONFIG.items() if k != missing}
    path = _write(tmp_path, config)
    with pytest.raises(SizingError) as exc:
        load_model(path)
    message = str(exc.value)
    assert f"'{missing}'" in message
    assert str(path) in message
    assert exc.value.flag == "--model"


def test_config_json_unknown_dtype(tmp_path):
    path = _write(tmp_path, {**LLAMA_70B_CONFIG, "torch_dtype": "int3"})
    with pytest.raises(SizingError, match="torch_dtype 'int3' is not one of bfloat16"):
        load_model(path)


def test_config_json_that_is_not_json(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{not json")
    with pytest.raises(SizingError, match="cannot read it as JSON"):
        load_model(path)


def test_unknown_model_lists_the_known_names():
    with pytest.raises(SizingError) as exc:
        load_model("llama-9000")
    message = str(exc.value)
    assert "--model: got 'llama-9000'" in message and exc.value.key == "endpoint.model"
    for name in MODELS:
        assert name in message


def test_instance_catalog_is_exactly_the_five_dpd_types():
    assert DPD_INSTANCE_TYPES == (
        "ml.p5.48xlarge",
        "ml.p5e.48xlarge",
        "ml.p5en.48xlarge",
        "ml.p6-b200.48xlarge",
        "ml.p6-b300.48xlarge",
    )
    p5 = instance_spec("ml.p5.48xlarge")
    assert (p5.gpu_count, p5.gpu_model, p5.gpu_memory_mib, p5.efa_interfaces) == (
        8,
        "H100",
        81920,
        32,
    )
    assert p5.gpu_memory_bytes == 80 * 2**30
    assert instance_spec("ml.p6-b300.48xlarge").memory_mib == 4 * 2**20  # 4 TiB


@pytest.mark.parametrize("bad", ["ml.g6e.48xlarge", "p5.48xlarge", "ml.p4d.24xlarge", ""])
def test_unknown_instance_type_lists_the_allowed_five(bad):
    with pytest.raises(SizingError) as exc:
        instance_spec(bad)
    message = str(exc.value)
    assert "--instance-type" in message
    for name in DPD_INSTANCE_TYPES:
        assert name in message
    if bad == "p5.48xlarge":
        assert "use ml.p5.48xlarge" in message


def _moto_instance_types() -> dict:
    resources = Path(moto.__file__).parent / "ec2" / "resources"
    plain, packed = resources / "instance_types.json", resources / "instance_types.json.gz"
    if plain.is_file():
        return json.loads(plain.read_text())
    return json.loads(gzip.decompress(packed.read_bytes()))


@pytest.mark.parametrize("name", DPD_INSTANCE_TYPES)
def test_instance_catalog_matches_moto_ec2_data(name):
    # moto 5.2.5 ships all five types; a missing one fails here rather than going unchecked.
    ec2 = _moto_instance_types()
    ec2_name = name.removeprefix("ml.")
    assert ec2_name in ec2, f"{ec2_name} missing from moto's EC2 data: cannot cross-check"
    data = ec2[ec2_name]
    (gpu,) = data["GpuInfo"]["Gpus"]
    spec = INSTANCES[name]
    assert spec.gpu_count == gpu["Count"]
    assert spec.gpu_model == gpu["Name"]
    assert spec.gpu_memory_mib == gpu["MemoryInfo"]["SizeInMiB"]
    assert spec.vcpus == data["VCpuInfo"]["DefaultVCpus"]
    assert spec.memory_mib == data["MemoryInfo"]["SizeInMiB"]
    assert spec.efa_interfaces == data["NetworkInfo"]["EfaInfo"]["MaximumEfaInterfaces"]
    assert f"{spec.network_gbps} Gigabit" == data["NetworkInfo"]["NetworkPerformance"]
