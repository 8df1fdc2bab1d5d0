"""core/vllm/scaling_signals.py: the built-in autoscaling signals, each a gauge or a counter the
pinned vLLM always exports, with the range vLLM's own help text gives it, and the pair's query."""

from __future__ import annotations

import typing

from core.vllm.scaling_signals import RATE_WINDOW, REPORTED, SIGNALS, pair_query, signal_query
from core.vllm.vllm_metrics import vllm_metrics
from core.vocabulary import SCRAPE_INTERVAL_SECONDS
from settings.endpoint.autoscaling import ScalingMetric


def test_the_settings_offer_exactly_the_built_in_signals():
    assert set(typing.get_args(ScalingMetric)) == set(SIGNALS)


def test_every_signal_is_a_series_the_pinned_vllm_always_exports():
    for signal in [*SIGNALS.values()]:
        assert vllm_metrics()[signal.metric.name] == signal.metric
        assert signal.metric.type in ("gauge", "counter") and signal.metric.when == ()
    assert vllm_metrics()[REPORTED.name].when == ()  # the pair counts pods by it


def test_a_counter_is_read_as_its_rate_over_four_scrapes():
    q = signal_query(SIGNALS["prompt-tokens-per-second"], "team", "prefill-llama-x")
    assert q == (
        'sum(rate(vllm:prompt_tokens_total{namespace="team",pod=~"prefill-llama-x"}'
        f"[{4 * SCRAPE_INTERVAL_SECONDS}s]))"
    )
    assert RATE_WINDOW == "120s"


def test_the_pairs_query_multiplies_before_it_divides():
    """5/3 as a decimal (1.666667) would make 3 leader pods ask for 6 followers, not 5."""
    q = pair_query("team", "prefill-llama-x", 5, 3)
    assert q.endswith(" or vector(0)) * 5 / 3")
    assert 'count(count by (pod) (vllm:num_requests_running{namespace="team"' in q


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
