"""`hyperpod-dpd canary` against a real Prometheus: synthetic series of the pinned vLLM for the
canary stack's baseline and candidate pods (named as the operator's Deployments name them, labelled
namespace and pod as the observability add-on's scrape labels them), backfilled with promtool.
Each scenario lives in a namespace of its own (the stack file's endpoints moved there), so one
server answers them all."""

from __future__ import annotations

import json
import re
import shlex

import pytest
import yaml

from core.exits import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_HOLD, EXIT_OK
from hyperpod_dpd.cli import main
from hyperpod_dpd.demo.vllm_traffic import Minute, decode_minute, prefill_minute, serve_canary
from tests.conftest import ROOT
from tests.fix_hints.edits import follow_in_file

MINUTES = 40

# scenario -> (baseline minute, candidate prefill minute, candidate decode minute)
SCENARIOS = {
    "healthy": (Minute(), prefill_minute(), decode_minute()),
    "more-errors": (Minute(errors=1), prefill_minute(), decode_minute(errors=12)),
    "slow-p99": (Minute(), prefill_minute(), decode_minute(ttft_le=5.0)),
    "worse-than-baseline": (Minute(), prefill_minute(), decode_minute(itl_le=0.05)),
    "few-requests": (Minute(), prefill_minute(requests=20), decode_minute(requests=20)),
}


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    server = serve_canary(tmp_path_factory.mktemp("prom"), SCENARIOS, MINUTES)
    yield server
    server.stop()


def _project(tmp_path, namespace: str):
    """The project with the canary stack's endpoints in `namespace`."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    raw = yaml.safe_load((ROOT / "Pulumi.canary.yaml").read_text())
    for e in raw["config"]["hyperpod-dpd:endpoints"].values():
        e["namespace"] = namespace
    (tmp_path / "Pulumi.canary.yaml").write_text(yaml.safe_dump(raw))
    return tmp_path


def _canary(tmp_path, monkeypatch, capsys, scenario, url, *more):
    monkeypatch.chdir(_project(tmp_path, scenario))
    code = main(["canary", "--stack", "canary", "--endpoint", "candidate",
                 "--prometheus-url", url, "--window", "30m", "--format", "json", *more])  # fmt: skip
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out else None), out.err


def test_a_healthy_candidate_is_promoted_to_the_next_step(
    prometheus, tmp_path, monkeypatch, capsys
):
    code, report, _ = _canary(tmp_path, monkeypatch, capsys, "healthy", prometheus.url)
    assert (code, report["verdict"]) == (EXIT_OK, "promote")
    assert report["candidate"]["requests"] == pytest.approx(18000, rel=0.02)
    assert report["candidate"]["errors"] == 0
    assert report["candidate"]["ttftP99Ms"] < 250  # every TTFT under 0.25 s
    assert report["baseline"]["endpoints"] == ["baseline"]
    assert report["next"] == (
        "pulumi config set --stack canary --path 'hyperpod-dpd:traffic.baseline' 75 && "
        "pulumi config set --stack canary --path 'hyperpod-dpd:traffic.candidate' 25 && "
        "pulumi up --stack canary"
    )
    # The decoders' 1000 output tokens/s on the endpoint's 16 GPUs (a prefill and a decode node
    # of 8), at the plan's prices.
    assert report["candidate"]["outputTokensPerSecondPerGpu"] == pytest.approx(1000 / 16, rel=0.02)
    assert report["candidate"]["usdPerMillionOutputTokens"] > 0
    # Numbers as a person writes them: 1000 tokens/s is 1000, not 1000.0000000000001.
    assert report["candidate"]["outputTokensPerSecond"] == pytest.approx(1000, rel=0.02)
    assert str(report["candidate"]["outputTokensPerSecond"]).partition(".")[2] in ("", "0")


def test_more_errors_than_the_baseline_roll_back(prometheus, tmp_path, monkeypatch, capsys):
    code, report, _ = _canary(tmp_path, monkeypatch, capsys, "more-errors", prometheus.url)
    assert (code, report["verdict"]) == (EXIT_FAILED, "rollback")
    assert any("Fisher's exact test" in r for r in report["reasons"])
    assert report["next"].startswith(
        "pulumi config set --stack canary --path 'hyperpod-dpd:traffic.baseline' 100"
    )


def test_a_p99_above_the_slo_rolls_back(prometheus, tmp_path, monkeypatch, capsys):
    code, report, _ = _canary(tmp_path, monkeypatch, capsys, "slow-p99", prometheus.url)
    assert (code, report["verdict"]) == (EXIT_FAILED, "rollback")
    assert any(
        r.startswith("TTFT p99") and "above the SLO's 3000 ms" in r for r in report["reasons"]
    )


def test_worse_than_the_baseline_beyond_the_margin_rolls_back(
    prometheus, tmp_path, monkeypatch, capsys
):
    # ITL p99 ~50 ms: within the SLO's 80 ms, twice the baseline's ~25 ms.
    code, report, _ = _canary(tmp_path, monkeypatch, capsys, "worse-than-baseline", prometheus.url)
    assert (code, report["verdict"]) == (EXIT_FAILED, "rollback")
    assert any("above the baseline's" in r for r in report["reasons"])


def test_too_few_requests_hold_saying_how_many_more(prometheus, tmp_path, monkeypatch, capsys):
    code, report, _ = _canary(tmp_path, monkeypatch, capsys, "few-requests", prometheus.url)
    assert (code, report["verdict"]) == (EXIT_HOLD, "hold")
    (reason,) = report["reasons"]
    assert reason.startswith("candidate served 600 requests")  # 20 a minute for 30 minutes
    assert "short of slo.minRequests 1000" in reason


def test_text_output_tabulates_both_sides(prometheus, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, "healthy"))
    code = main(["canary", "--stack", "canary", "--endpoint", "candidate",
                 "--prometheus-url", prometheus.url])  # fmt: skip
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "verdict: promote" in out and "TTFT p99 ms" in out and "next: pulumi config set" in out


def test_an_unreachable_prometheus_is_bad_input_naming_the_flag(tmp_path, monkeypatch, capsys):
    code, report, err = _canary(tmp_path, monkeypatch, capsys, "healthy", "http://127.0.0.1:9")
    assert (code, report) == (EXIT_BAD_INPUT, None)
    assert err.startswith(
        "error: --prometheus-url: cannot query a Prometheus at http://127.0.0.1:9"
    )


def test_a_bad_window_is_bad_input(tmp_path, monkeypatch, capsys):
    code, _, err = _canary(tmp_path, monkeypatch, capsys, "healthy", "http://x", "--window", "soon")
    assert code == EXIT_BAD_INPUT and "--window 'soon'" in err


def test_without_endpoint_the_splits_one_candidate_is_judged(
    prometheus, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(_project(tmp_path, "healthy"))
    code = main(["canary", "--stack", "canary", "--prometheus-url", prometheus.url,
                 "--format", "json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert (code, report["candidate"]["endpoints"]) == (EXIT_OK, ["candidate"])


def test_a_stack_of_one_endpoint_is_told_where_a_canary_is_declared(capsys):
    """dev has no baseline: no hint may name one (`--baseline baseline` once did)."""
    code = main(["canary", "--stack", "dev", "--prometheus-url", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT
    assert "--baseline" not in err
    assert "hyperpod-dpd canary --stack canary --endpoint candidate" in err


# --- every hint the canary prints, followed once, exits 0 (the fix-hint audit of the command) --


def _hinted_command(err: str) -> list[str]:
    """The `hyperpod-dpd canary ...` command a refusal offers, as argv."""
    line = re.search(r"hyperpod-dpd (canary [^;\n]*?)\s*$", err.strip(), re.M)
    assert line, err
    return shlex.split(line[1])


def test_a_hinted_command_exits_0(prometheus, tmp_path, monkeypatch, capsys):
    # dev has no second endpoint: the hint names the stack that declares a canary.
    assert main(["canary", "--stack", "dev", "--prometheus-url", prometheus.url]) == EXIT_BAD_INPUT
    argv = _hinted_command(capsys.readouterr().err)
    monkeypatch.chdir(_project(tmp_path / "a", "healthy"))
    assert main([*argv, "--prometheus-url", prometheus.url]) == EXIT_OK
    capsys.readouterr()
    # A stack of two endpoints that splits no traffic: the hint names the other as --baseline.
    project = _project(tmp_path / "b", "healthy")
    raw = yaml.safe_load((project / "Pulumi.canary.yaml").read_text())
    del raw["config"]["hyperpod-dpd:traffic"]
    (project / "Pulumi.canary.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.chdir(project)
    args = [
        "canary",
        "--stack",
        "canary",
        "--endpoint",
        "candidate",
        "--prometheus-url",
        prometheus.url,
    ]
    assert main(args) == EXIT_BAD_INPUT
    argv = _hinted_command(capsys.readouterr().err)
    assert main([*argv, "--prometheus-url", prometheus.url]) == EXIT_OK


def test_a_missing_slo_hint_followed_exits_0(prometheus, tmp_path, monkeypatch, capsys):
    project = _project(tmp_path, "healthy")
    stack_file = project / "Pulumi.canary.yaml"
    raw = yaml.safe_load(stack_file.read_text())
    del raw["config"]["hyperpod-dpd:slo"]
    stack_file.write_text(yaml.safe_dump(raw))
    monkeypatch.chdir(project)
    args = ["canary", "--stack", "canary", "--prometheus-url", prometheus.url]
    assert main(args) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "pulumi config set --stack canary --path" in err
    follow_in_file(stack_file, err)
    assert main(args) == EXIT_OK
