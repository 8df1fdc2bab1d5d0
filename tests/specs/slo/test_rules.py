"""The canary stack's rule file, judged by promtool: `check rules` accepts it, and `test rules`
replays synthetic series of the pinned vLLM for the baseline's and the candidate's pods (named as
the operator's Deployments name them): each alert fires in its scenario, and on a healthy pair
of endpoints none does.

Each scenario is a test file of its own, judged alone (promtool gives each file's test group a
storage and rule evaluation of its own), and one `promtool test rules` judges them all: it says
each file's verdict under the file's name (prometheus/prometheus cmd/promtool/unittest.go,
RulesUnitTest), which each test reads for its scenario. A scenario promtool passed before, on
this very rule file with this promtool, is read back instead of replayed (tests/support/tool_cache.py):
each replay of two hours of series costs promtool about a second of CPU."""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from core.vllm.slo_alerting import LATENCY_OBJECTIVES
from core.vllm.vllm_metrics import vllm_metrics
from hyperpod_dpd.demo.prometheus import INSTALL_HINT
from hyperpod_dpd.demo.vllm_traffic import (
    ITL_LE,
    Minute,
    decode_minute,
    input_series,
    pod,
    prefill_minute,
)
from settings import ConfigError, parse_settings
from specs.slo.rules import rule_file, rule_file_text
from tests.conftest import canary_raw
from tests.support.tool_cache import kept_each, key

# One promtool run judges every scenario (`verdicts`): on one worker, handed out first.
pytestmark = [pytest.mark.long, pytest.mark.xdist_group("promtool-rules")]
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


@functools.cache
def _rules():
    return rule_file(parse_settings(canary_raw()), "canary")


def _severity(alert: str) -> str:
    for group in _rules()["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == alert:
                return rule["labels"]["severity"]
    raise KeyError(alert)


# promtool's Go runtime collects garbage once its heap doubles (GOGC=100): replaying two hours
# of series, that is a fifth of its CPU. At 8x (a few hundred MB at most) it collects a fraction
# as often and judges the same.
PROMTOOL_ENV = {"GOGC": "800"}
_HEADER = re.compile(r"^Unit Testing:\s+(\S+)$", re.MULTILINE)


def _verdicts(directory: Path, cases: dict[str, list[dict]]) -> dict[str, str]:
    """promtool's verdict on each case (its test groups, a file of its own beside the rule
    file): "SUCCESS", or what failed as promtool says it. A case promtool passed before, with
    this rule file and this promtool, is not replayed again (tests/support/tool_cache.py)."""
    rules = rule_file_text(parse_settings(canary_raw()), "canary")
    (directory / "rules.yml").write_text(rules)
    texts = {}
    for case, tests in cases.items():
        spec = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}
        texts[case] = yaml.safe_dump(spec, sort_keys=False, width=1000)
        (directory / f"{case}.yml").write_text(texts[case])
    version = subprocess.run([_promtool(), "--version"], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
    keys = {case: key(version, "test rules", rules, text) for case, text in texts.items()}
    return kept_each("promtool-test-rules", keys, lambda missing: _test_rules(directory, missing),
                     keep=lambda verdict: verdict == "SUCCESS")  # fmt: skip


def _test_rules(directory: Path, cases: list[str]) -> dict[str, str]:
    """One `promtool test rules` over the cases' files: it prints `Unit Testing: <file>` and
    then the file's verdict (the failures on stderr, taken in the same stream so that they stay
    under their file)."""
    files = {f"{case}.yml": case for case in cases}
    run = subprocess.run(
        [_promtool(), "test", "rules", *files],
        cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
        env=os.environ | PROMTOOL_ENV,
    )  # fmt: skip
    headers = list(_HEADER.finditer(run.stdout))
    said = {
        h.group(1): run.stdout[h.end() : nxt.start() if nxt else None].strip()
        for h, nxt in zip(headers, [*headers[1:], None], strict=True)
    }
    assert set(said) == set(files), (
        f"promtool ({run.returncode}) judged {sorted(said)}: {run.stdout}"
    )
    assert run.returncode == (0 if all(v == "SUCCESS" for v in said.values()) else 1), run.stdout
    return {case: said[file] for file, case in files.items()}


def _case(alert: str) -> list[dict]:
    pods, (endpoint, role), quiet = SCENARIOS[alert]
    return [{
        "interval": "1m",
        "input_series": input_series(pods, MINUTES),
        "promql_expr_test": [_firing(alert, endpoint, role), *map(_quiet, quiet)],
    }]  # fmt: skip


def _healthy() -> list[dict]:
    return [{
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
    }]  # fmt: skip


FLOORS = [o for o in LATENCY_OBJECTIVES if o.key == "itlP99Ms"]


def _floor(objective) -> list[dict]:
    """Every inter-token latency in vLLM's first bucket: the record holds q x that bound."""
    first = vllm_metrics()[objective.histogram].buckets[0]
    floor = objective.quantile * first
    series = f'hyperpod_dpd:{objective.record}{{endpoint="candidate",role="decode"}}'
    # A quarter of an hour is enough for the record's 5-minute rate (the alerts' scenarios need
    # their 1-hour windows; this does not, and promtool's time grows with the series).
    return [{
        "interval": "1m",
        "input_series": input_series(_pods(candidate_decode=decode_minute(itl_le=first)), 15),
        "promql_expr_test": [
            {"expr": f"count(abs({series} - {floor!r}) < 1e-9)", "eval_time": "10m",
             "exp_samples": [{"labels": "{}", "value": 1}]},
        ],
    }]  # fmt: skip


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory) -> dict[str, str]:
    """Every scenario of this module judged in one promtool run (the module's tests share a
    worker: a second would run it all again)."""
    cases = {"healthy": _healthy(), **{alert: _case(alert) for alert in SCENARIOS}}
    cases |= {f"floor-{o.key}": _floor(o) for o in FLOORS}
    return _verdicts(tmp_path_factory.mktemp("promtool"), cases)


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


def test_a_healthy_pair_raises_no_alert(verdicts):
    assert verdicts["healthy"] == "SUCCESS", verdicts["healthy"]


@pytest.mark.parametrize("alert", sorted(SCENARIOS))
def test_each_alert_fires_in_its_scenario(verdicts, alert):
    assert verdicts[alert] == "SUCCESS", verdicts[alert]


@pytest.mark.parametrize("objective", FLOORS)
def test_the_least_latency_the_rules_record_is_the_floor_the_settings_refuse_below(
    verdicts, objective
):
    """Every inter-token latency in vLLM's first bucket: Prometheus' histogram_quantile answers
    q x that bound (it interpolates from 0), the least the record can hold. The settings refuse
    an objective below it (settings/endpoint/slo.py): its alert would fire whenever the endpoint
    serves. Judged on promtool, not on the formula the settings use."""
    first = vllm_metrics()[objective.histogram].buckets[0]
    assert first in ITL_LE  # the synthetic traffic has vLLM's first bucket
    floor = objective.quantile * first
    assert verdicts[f"floor-{objective.key}"] == "SUCCESS", verdicts[f"floor-{objective.key}"]
    raw = canary_raw()
    raw["hyperpod-dpd:slo"][objective.key] = math.ceil(floor * 1000)
    assert parse_settings(raw)
    raw["hyperpod-dpd:slo"][objective.key] = math.ceil(floor * 1000) - 1
    with pytest.raises(ConfigError):
        parse_settings(raw)
