"""The canary stack's rule file, judged by promtool: `check rules` accepts it, and `test rules`
replays synthetic series of the pinned vLLM for the baseline's and the candidate's pods (named as
the operator's Deployments name them): each alert fires in its scenario, and on a healthy pair
of endpoints none does."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from hyperpod_dpd.demo.prometheus import INSTALL_HINT
from hyperpod_dpd.demo.vllm_traffic import Minute, decode_minute, input_series, pod, prefill_minute
from settings import parse_settings
from specs.slo.rules import rule_file, rule_file_text
from tests.conftest import canary_raw

MINUTES = 120
EVAL = "110m"


def _promtool() -> str:
    binary = shutil.which("promtool")
    assert binary, f"these tests run promtool: {INSTALL_HINT}"
    return binary


def _pods(candidate_decode=None, candidate_prefill=None, baseline=None):
    return [
        pod("baseline", "colocated", baseline or Minute()),
        pod("candidate", "prefill", candidate_prefill or prefill_minute()),
        pod("candidate", "decode", candidate_decode or decode_minute()),
    ]


# alert -> (the pods of its scenario, the endpoint and role it names, alerts that must stay quiet)
SCENARIOS = {
    "HyperpodDpdErrorBudgetBurnFast": (
        _pods(candidate_decode=decode_minute(errors=120)), ("candidate", "decode"), ()
    ),
    "HyperpodDpdErrorBudgetBurnSlow": (
        # 5% failing: 3x the 1% budget over 1d and 2h, below the 6x and 14.4x of a page.
        _pods(candidate_decode=decode_minute(errors=30)), ("candidate", "decode"),
        ("HyperpodDpdErrorBudgetBurnFast",),
    ),
    "HyperpodDpdTtftP50AboveSlo": (
        # Every TTFT in (1, 2.5] s: p50 1.75 s over 0.8 s; p99 2.49 s within 3 s.
        _pods(baseline=Minute(ttft_le=2.5)), ("baseline", "colocated"),
        ("HyperpodDpdTtftP99AboveSlo",),
    ),
    "HyperpodDpdTtftP99AboveSlo": (
        _pods(baseline=Minute(ttft_le=5.0)), ("baseline", "colocated"), (),
    ),
    "HyperpodDpdItlP99AboveSlo": (
        _pods(candidate_decode=decode_minute(itl_le=0.1)), ("candidate", "decode"), (),
    ),
    "HyperpodDpdKvCacheSaturated": (
        _pods(candidate_decode=decode_minute(kv_usage=0.98)), ("candidate", "decode"), (),
    ),
    "HyperpodDpdPreempting": (
        _pods(baseline=Minute(preemptions=30)), ("baseline", "colocated"), (),
    ),
    "HyperpodDpdPrefillQueueGrowing": (
        _pods(candidate_prefill=prefill_minute(waiting=1, waiting_growth=0.5)),
        ("candidate", "prefill"), (),
    ),
    "HyperpodDpdDecodeComputesPrompts": (
        # The decoder computes its prompts: no KV arrives, though the prefiller computes too.
        _pods(candidate_decode=decode_minute(received=0, kv_hits=0)), ("candidate", "decode"),
        ("HyperpodDpdPrefillIdle",),
    ),
    "HyperpodDpdPrefillIdle": (
        # modelplane#175: the prefill pool serves nothing, the decoder computes every prompt.
        _pods(
            candidate_prefill=prefill_minute(requests=0, prompt_tokens=0, tokens_out=0),
            candidate_decode=decode_minute(received=0, kv_hits=0),
        ),
        ("candidate", "prefill"), ("HyperpodDpdKvTransferFailing",),
    ),
    "HyperpodDpdKvTransferFailing": (
        # The prefiller computes; the decoder's connector finds 30% of the KV it looks up.
        _pods(candidate_decode=decode_minute(kv_hits=180000, received=180000)),
        ("candidate", "decode"), ("HyperpodDpdDecodeComputesPrompts",),
    ),
    "HyperpodDpdCandidateWorseThanBaseline": (
        # TTFT p99 0.50 s against the baseline's 0.25 s: within the SLO, 2x the baseline.
        _pods(candidate_decode=decode_minute(ttft_le=0.5)), ("candidate", "decode"),
        ("HyperpodDpdTtftP99AboveSlo",),
    ),
}  # fmt: skip


def _firing(alert: str, endpoint: str, role: str) -> dict:
    return {
        "expr": f'ALERTS{{alertname="{alert}",alertstate="firing"}}',
        "eval_time": EVAL,
        "exp_samples": [
            {
                "labels": f'ALERTS{{alertname="{alert}",alertstate="firing",endpoint="{endpoint}",'
                f'role="{role}",severity="{_severity(alert)}"}}',
                "value": 1,
            }
        ],
    }


def _quiet(alert: str) -> dict:
    return {"expr": f'ALERTS{{alertname="{alert}"}}', "eval_time": EVAL, "exp_samples": []}


def _rules():
    return rule_file(parse_settings(canary_raw()), "canary")


def _severity(alert: str) -> str:
    for group in _rules()["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == alert:
                return rule["labels"]["severity"]
    raise KeyError(alert)


def _run(tmp_path, tests: list[dict]) -> subprocess.CompletedProcess:
    (tmp_path / "rules.yml").write_text(rule_file_text(parse_settings(canary_raw()), "canary"))
    spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False, width=1000))
    return subprocess.run(
        [_promtool(), "test", "rules", "tests.yml"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_promtool_accepts_the_rule_file_the_canary_stack_plans(tmp_path):
    (tmp_path / "rules.yml").write_text(rule_file_text(parse_settings(canary_raw()), "canary"))
    check = subprocess.run(
        [_promtool(), "check", "rules", "rules.yml"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS" in check.stdout


def test_every_alert_has_a_scenario_and_says_what_to_do():
    alerts = {r["alert"]: r for g in _rules()["groups"] for r in g["rules"] if "alert" in r}
    assert set(alerts) == set(SCENARIOS)
    for name, rule in alerts.items():
        assert set(rule["labels"]) >= {"severity", "endpoint", "role"}, name
        assert rule["annotations"]["action"], name


def test_the_candidate_s_alerts_say_how_to_roll_it_back():
    rules = [r for g in _rules()["groups"] for r in g["rules"] if "alert" in r]
    back = (
        "pulumi config set --stack canary --path 'hyperpod-dpd:traffic.baseline' 100 && "
        "pulumi config set --stack canary --path 'hyperpod-dpd:traffic.candidate' 0 && "
        "pulumi up --stack canary"
    )
    candidate = [r for r in rules if r["labels"]["endpoint"] == "candidate"]
    assert candidate and all(back in r["annotations"]["action"] for r in candidate)
    baseline = [r for r in rules if r["labels"]["endpoint"] == "baseline"]
    assert baseline and not any("traffic" in r["annotations"]["action"] for r in baseline)


def test_a_healthy_pair_raises_no_alert(tmp_path):
    run = _run(tmp_path, [{
        "interval": "1m",
        "input_series": input_series(_pods(), MINUTES),
        # The records the alerts read exist: a silent alert on missing data proves nothing.
        "promql_expr_test": [
            {"expr": 'count(hyperpod_dpd:ttft_seconds:p99_5m{endpoint="candidate",role="decode"} < 0.3)',
             "eval_time": EVAL, "exp_samples": [{"labels": "{}", "value": 1}]},
            {"expr": 'count(hyperpod_dpd:long_prompts:rate5m{endpoint="candidate"} > 4)',
             "eval_time": EVAL, "exp_samples": [{"labels": "{}", "value": 1}]},
            {"expr": "ALERTS", "eval_time": EVAL, "exp_samples": []},
        ],
    }])  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("alert", sorted(SCENARIOS))
def test_each_alert_fires_in_its_scenario(tmp_path, alert):
    pods, (endpoint, role), quiet = SCENARIOS[alert]
    run = _run(tmp_path, [{
        "interval": "1m",
        "input_series": input_series(pods, MINUTES),
        "promql_expr_test": [_firing(alert, endpoint, role), *map(_quiet, quiet)],
    }])  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
