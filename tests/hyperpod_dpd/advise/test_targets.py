"""The mapping onto aisimulate: each simulated model's bundled config has our catalog's
architecture (what lets Llama 3.3 70B run as the 3.1 70B config), read from the advise venv."""

from __future__ import annotations

import json

import pytest

from core.sizing.catalog import INSTANCES, MODELS
from hyperpod_dpd.advise.engine import VENV
from hyperpod_dpd.advise.targets import SIMULATED_MODELS, SYSTEMS


@pytest.mark.parametrize("name", sorted(SIMULATED_MODELS))
def test_the_bundled_config_has_our_catalogs_architecture(name):
    (configs,) = VENV.glob("lib/python3*/site-packages/aisimulate_core/model_configs")
    bundled = configs / (SIMULATED_MODELS[name].replace("/", "--") + "_config.json")
    config = json.loads(bundled.read_text())
    ours = MODELS[name]
    assert config["num_hidden_layers"] == ours.num_layers
    assert config["num_attention_heads"] == ours.num_attention_heads
    assert config["num_key_value_heads"] == ours.num_kv_heads
    assert config["hidden_size"] // config["num_attention_heads"] == ours.head_dim


def test_each_simulated_system_is_the_gpu_of_its_instance_type():
    for instance_type, system in SYSTEMS.items():
        assert system.startswith(INSTANCES[instance_type].gpu_model.lower()), instance_type
