"""SLOs in config: the stack's default, an endpoint's own, {} as unset, and the checks."""

from __future__ import annotations

from settings import parse_settings
from settings.endpoint.slo import effective_slo
from tests.conftest import canary_raw, edit
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"


def test_the_canary_stack_judges_both_endpoints_by_the_stack_default():
    s = parse_settings(canary_raw())
    assert s.slo is not None and s.slo.ttft_p99_ms == 3000
    for entry in s.entries():
        assert effective_slo(s.slo, entry.config.slo) == s.slo


def test_an_endpoint_slo_replaces_the_default_and_an_empty_one_is_unset():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.slo", {"ttftP99Ms": 1500})
    edit(raw, f"{NS}:slo", {})
    s = parse_settings(raw)
    assert s.slo is None
    by_key = {x.key: effective_slo(s.slo, x.config.slo) for x in s.entries()}
    assert by_key["baseline"] is None
    assert by_key["candidate"].ttft_p99_ms == 1500
    assert by_key["candidate"].ttft_p50_ms == 500  # the model's default, not the stack's


def test_a_median_later_than_the_99th_percentile_is_refused_with_a_fix_that_works():
    raw = canary_raw()
    edit(raw, f"{NS}:slo", {"ttftP50Ms": 5000, "ttftP99Ms": 3000})
    message = only_problem(raw)
    assert message.startswith("hyperpod-dpd:slo.ttftP50Ms: got 5000")
    assert "hyperpod-dpd:slo.ttftP99Ms is 3000" in message
    assert parse_settings(followed(raw, message)).slo.ttft_p50_ms == 3000


def test_an_error_budget_is_a_fraction():
    raw = canary_raw()
    edit(raw, f"{NS}:slo", {"errorRate": 1.5})
    message = only_problem(raw)
    assert message.startswith("hyperpod-dpd:slo.errorRate: got 1.5")


def test_alerts_go_to_an_email_or_https_address():
    raw = canary_raw()
    edit(raw, f"{NS}:observability.alertSubscriptions", ["http://hooks.example.com/x"])
    message = only_problem(raw)
    assert "hyperpod-dpd:observability.alertSubscriptions[0]" in message
    assert "an email address" in message
    fixed = parse_settings(followed(raw, message))
    assert fixed.observability.alert_subscriptions == ["https://hooks.example.com/x"]
