"""core/vllm/vllm_metrics.json: what scripts/extract_vllm_metrics.py makes of vLLM's recorded source."""

from __future__ import annotations

import ast
import gzip
import hashlib
from pathlib import Path

import pytest

from core.versions import WORKER_VLLM_VERSION
from core.vllm.vllm_metrics import exported_gauge, vllm_metrics, vllm_metrics_version
from scripts import extract_vllm_metrics as script

ROOT = Path(__file__).resolve().parents[3]
RECORDED = Path(__file__).with_name("vllm_source")


def test_the_committed_metrics_are_what_the_script_extracts_from_the_recorded_source(capsys):
    assert script.main(["--check"]) == 0, capsys.readouterr().err


def test_the_recorded_source_is_the_one_the_metrics_name():
    data = script.extract(script.read_source(RECORDED), WORKER_VLLM_VERSION)
    for path, digest in data["source"].items():
        body = gzip.decompress((RECORDED / (Path(path).name + ".gz")).read_bytes())
        assert hashlib.sha256(body).hexdigest() == digest


def test_the_metrics_are_the_pinned_images_vllm():
    assert vllm_metrics_version() == WORKER_VLLM_VERSION


def test_check_fails_on_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "vllm_metrics.json"
    stale.write_text(
        (ROOT / "core" / "vllm" / "vllm_metrics.json").read_text().replace("kv_cache", "gpu_cache")
    )
    assert script.main(["--check", "--out", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err


def test_every_metric_constructor_of_the_logger_is_extracted():
    """An independent count: every `name="vllm:…"` keyword in PrometheusStatLogger, plus the one
    assigned to a local (cache_config_info), is a metric of the file, and nothing else is."""
    text = gzip.decompress((RECORDED / "loggers.py.gz").read_bytes()).decode()
    cls = next(
        n for n in ast.parse(text).body
        if isinstance(n, ast.ClassDef) and n.name == "PrometheusStatLogger"
    )  # fmt: skip
    literals = {
        n.value for n in ast.walk(cls)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("vllm:")
        and " " not in n.value
    }  # fmt: skip
    assert literals == set(vllm_metrics())


def test_types_labels_and_samples_follow_vllm_and_prometheus_client():
    m = vllm_metrics()
    assert m["vllm:kv_cache_usage_perc"].type == "gauge"
    assert m["vllm:kv_cache_usage_perc"].labels == ("model_name", "engine")
    assert m["vllm:prompt_tokens"].samples == ("vllm:prompt_tokens_total",)
    assert m["vllm:request_success"].labels == ("model_name", "engine", "finished_reason")
    assert m["vllm:e2e_request_latency_seconds"].samples[0].endswith("_bucket")
    assert m["vllm:lora_requests_info"].when == ("vllm_config.lora_config is not None",)
    assert m["vllm:cache_config_info"].labels is None  # vLLM's config keys, at run time
    assert "vllm:gpu_cache_usage_perc" not in m  # the name before vLLM v1


def test_a_gauge_the_pin_does_not_export_is_refused_by_name():
    assert exported_gauge("vllm:num_requests_waiting").name == "vllm:num_requests_waiting"
    for name in ("vllm:gpu_cache_usage_perc", "vllm:prompt_tokens", "vllm:lora_requests_info"):
        with pytest.raises(KeyError, match=r"0\.19\.0"):
            exported_gauge(name)


def _bounds_in_source(metric: str) -> list[float] | None:
    """An independent reading: the `buckets=[...]` list literal of the constructor naming
    `metric` (None: no literal there)."""
    text = gzip.decompress((RECORDED / "loggers.py.gz").read_bytes()).decode()
    for node in ast.walk(ast.parse(text)):
        keywords = {k.arg: k.value for k in getattr(node, "keywords", []) if k.arg}
        name = keywords.get("name")
        if isinstance(name, ast.Constant) and name.value == metric:
            bounds = keywords.get("buckets")
            return ast.literal_eval(bounds) if isinstance(bounds, ast.List) else None
    raise AssertionError(f"{metric} not in the recorded source")


def test_the_latency_histograms_carry_vllms_bucket_bounds():
    """What the SLO checks judge by: TTFT's first bound 1 ms, ITL's 10 ms in vLLM 0.19.0; the
    prompt-length buckets are computed at run time (build_1_2_5_buckets(max_model_len))."""
    m = vllm_metrics()
    for name in ("vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds"):
        assert list(m[name].buckets) == _bounds_in_source(name)
    assert m["vllm:inter_token_latency_seconds"].buckets[0] == 0.01
    assert m["vllm:time_to_first_token_seconds"].buckets[0] == 0.001
    assert m["vllm:request_prompt_tokens"].buckets is None
    assert all(metric.buckets is None for metric in m.values() if metric.type != "histogram")


def test_bounds_named_by_a_local_are_read_through_it():
    """vLLM's request-latency histograms share one local list (request_latency_buckets)."""
    assert vllm_metrics()["vllm:e2e_request_latency_seconds"].buckets[:3] == (0.3, 0.5, 0.8)
