"""SLOs in config: the stack's default, an endpoint's own, {} as unset, and the checks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.vllm.vllm_metrics import vllm_metrics
from settings import ConfigError, parse_settings
from settings.endpoint.slo import effective_slo
from specs.slo.rules import rule_file
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


# --- every objective judged by what its alerts can detect ------------------------------------


def _alert_rules(raw) -> dict[str, dict]:
    """The canary stack's rules, by alert or record name, of its candidate's group."""
    (group,) = [
        g
        for g in rule_file(parse_settings(raw), "canary")["groups"]
        if g["name"].endswith("candidate")
    ]
    return {r.get("alert") or r["record"]: r for r in group["rules"]}


def _burn_rates() -> set[float]:
    """The burn rates as the project's own alert rules write them: each threshold of the
    budget-burn alerts over the canary stack's budget."""
    raw = canary_raw()
    budget = parse_settings(raw).slo.error_rate
    rules = _alert_rules(raw)
    exprs = [rules[a]["expr"] for a in rules if a.startswith("HyperpodDpdErrorBudgetBurn")]
    rates = {round(float(t) / budget, 6) for e in exprs for t in re.findall(r"> ([0-9.e-]+)", e)}
    assert len(rates) >= 3, exprs  # the workbook's three: 14.4, 6, 3
    return rates


RATES = _burn_rates()


def test_an_error_rate_written_as_an_availability_is_refused_with_the_budget_it_meant():
    raw = canary_raw()
    edit(raw, f"{NS}:slo.errorRate", 0.99)
    message = only_problem(raw)
    assert message.startswith("hyperpod-dpd:slo.errorRate: got 0.99; allowed: an error budget ")
    assert "can never fire" in message and "written as an availability?" in message
    assert parse_settings(followed(raw, message)).slo.error_rate == 0.01


@settings(max_examples=200, derandomize=True, deadline=None)
@given(budget=st.floats(min_value=1e-6, max_value=0.999999))
def test_a_budget_is_taken_exactly_when_every_burn_alert_can_fire(budget):
    """An alert fires once the error ratio exceeds rate x budget; no ratio exceeds 1."""
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.slo", {"errorRate": budget})
    reachable = all(rate * budget < 1 for rate in RATES)
    try:
        parse_settings(raw)
    except ConfigError as error:
        assert not reachable, error
        (problem,) = error.problems
        assert problem.key == f"{NS}:endpoints.candidate.slo.errorRate"
        assert parse_settings(followed(raw, problem.render()))
    else:
        assert reachable, budget


def _quantiles() -> dict[str, tuple[float, str]]:
    """objective key -> (q, the vLLM histogram) its alert's recorded series is read at, from the
    canary stack's rule file: the alert `record > objective` and the record's histogram_quantile."""
    rules = _alert_rules(canary_raw())
    out = {}
    for key in ("ttftP50Ms", "ttftP99Ms", "itlP99Ms"):
        name = {"ttftP50Ms": "TtftP50", "ttftP99Ms": "TtftP99", "itlP99Ms": "ItlP99"}[key]
        alert = rules[f"HyperpodDpd{name}AboveSlo"]["expr"]
        record = re.match(r"hyperpod_dpd:([a-z0-9_:]+)\{", alert).group(1)
        quantile = rules[f"hyperpod_dpd:{record}"]["expr"]
        q, histogram = re.match(
            r"histogram_quantile\(([0-9.]+), .*?(vllm:[a-z_]+)_bucket", quantile
        ).groups()
        out[key] = (float(q), histogram)
    return out


QUANTILES = _quantiles()


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    key=st.sampled_from(sorted(QUANTILES)),
    ms=st.one_of(st.integers(1, 20), st.integers(1, 4_000_000)),
)
def test_a_latency_objective_is_taken_exactly_when_histogram_quantile_can_tell_it(key, ms):
    """histogram_quantile(q) answers between q x the first bound (all in the first bucket: it
    interpolates from 0) and the last finite bound (the +Inf bucket); an objective outside that
    makes its alert fire forever or never. The bounds: vLLM's own, generated from its source."""
    q, histogram = QUANTILES[key]
    bounds = vllm_metrics()[histogram].buckets
    raw = canary_raw()
    # The other objectives where they are fine, and a median never after the 99th percentile.
    slo = {"ttftP50Ms": 1, "ttftP99Ms": 2_559_999, "itlP99Ms": 80, key: ms}
    edit(raw, f"{NS}:endpoints.candidate.slo", slo)
    told = q * bounds[0] * 1000 <= ms < bounds[-1] * 1000
    try:
        parse_settings(raw)
    except ConfigError as error:
        assert not told, error
        assert error.problems[0].key == f"{NS}:endpoints.candidate.slo.{key}", error
        assert parse_settings(followed(raw, error.problems[0].render()))
    else:
        assert told, (key, ms)


def test_an_itl_objective_under_vllms_first_bucket_is_refused_naming_the_bucket():
    raw = canary_raw()
    edit(raw, f"{NS}:slo.itlP99Ms", 5)
    message = only_problem(raw)
    assert message.startswith("hyperpod-dpd:slo.itlP99Ms: got 5; allowed: 10 to 79999 ms: ")
    assert "vllm:inter_token_latency_seconds's buckets from 0.01 s" in message
    assert "HyperpodDpdItlP99AboveSlo would fire whenever the endpoint serves" in message
    assert parse_settings(followed(raw, message)).slo.itl_p99_ms == 10


@pytest.mark.parametrize(
    ("target", "fixed"),
    [
        ("mailto:oncall@example.com", "oncall@example.com"),  # a URI, not an address
        ("MAILTO:oncall@example.com", "oncall@example.com"),
        ("On Call <oncall@example.com>", None),  # a display name: SNS takes the address alone
        ('"on call"@example.com', None),
        ("oncall@example..com", None),
        ("on call@example.com", None),
        ("oncall@example.test", None),  # a special-use domain no mail reaches (RFC 6761)
        ("https:///alerts", None),  # no host
    ],
)
def test_an_alert_target_sns_would_refuse_is_refused_naming_its_entry(target, fixed):
    raw = canary_raw()
    edit(raw, f"{NS}:observability.alertSubscriptions", ["team@example.com", target])
    message = only_problem(raw)
    assert message.startswith(f"{NS}:observability.alertSubscriptions[1]: got ")
    assert "allowed: an email address" in message or "allowed: an HTTPS URL" in message
    if fixed is not None:
        subscriptions = parse_settings(followed(raw, message)).observability.alert_subscriptions
        assert subscriptions == ["team@example.com", fixed]


def test_one_endpoint_twice_is_refused_however_its_domain_is_written():
    """SNS answers a second subscribe of an endpoint with the first subscription: removing
    either entry later would unsubscribe both. Domains and hosts are case-insensitive."""
    raw = canary_raw()
    targets = ["oncall@example.com", "https://hooks.example.com/x", "oncall@EXAMPLE.com",
               "https://Hooks.Example.com/x", "OnCall@example.com"]  # fmt: skip
    edit(raw, f"{NS}:observability.alertSubscriptions", targets)
    with pytest.raises(ConfigError) as info:
        parse_settings(raw)
    keys = [p.key for p in info.value.problems]
    # The local part is the mailbox's own to read (RFC 5321): OnCall@ is another address.
    assert keys == [f"{NS}:observability.alertSubscriptions[{i}]" for i in (2, 3)]
    assert "SNS answers a second subscribe" in info.value.problems[0].allowed


def test_email_and_https_targets_are_taken():
    raw = canary_raw()
    targets = ["oncall@example.com", "https://hooks.example.com/sns?x=1", "ops+llm@sub.example.org"]
    edit(raw, f"{NS}:observability.alertSubscriptions", targets)
    assert parse_settings(raw).observability.alert_subscriptions == targets
