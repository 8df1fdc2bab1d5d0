"""core/vllm/scaling_signals.py: the built-in autoscaling signals, each a gauge the pinned vLLM always
exports, with the range vLLM's own help text gives it."""

from __future__ import annotations

import typing

from core.vllm.scaling_signals import SIGNALS, signal_query
from core.vllm.vllm_metrics import vllm_metrics
from settings.endpoint.model import ScalingMetric


def test_the_settings_offer_exactly_the_built_in_signals():
    assert set(typing.get_args(ScalingMetric)) == set(SIGNALS)


def test_every_signal_is_a_gauge_the_pinned_vllm_always_exports():
    for signal in SIGNALS.values():
        assert vllm_metrics()[signal.metric.name] == signal.metric
        assert signal.metric.type == "gauge" and signal.metric.when == ()


def test_a_bounded_signal_takes_its_bound_from_vllms_help_text():
    """kv-cache-usage tops at 1 because vLLM says so ("1 means 100 percent usage"); the request
    counts have no top."""
    bounded = {name: s for name, s in SIGNALS.items() if s.top is not None}
    assert set(bounded) == {"kv-cache-usage"}
    assert "1 means 100 percent usage" in bounded["kv-cache-usage"].metric.help
    assert bounded["kv-cache-usage"].top == 1.0


def test_a_signals_query_aggregates_the_selected_pods():
    q = signal_query(SIGNALS["waiting-requests"], "team", "prefill-llama-x")
    assert q == 'sum(vllm:num_requests_waiting{namespace="team",pod=~"prefill-llama-x"})'
