"""Every command's JSON speaks one style, plan.json's: camelCase keys and rounded numbers
(tests/support/json_style.py). The commands are discovered from the command line (hyperpod_dpd/cli
COMMANDS): each that takes `--format json` must be run here (or, where its fakes live with its
own tests, in the file named), so a command added later cannot print another style unseen."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil

import pytest

from hyperpod_dpd.cli import main, parser
from hyperpod_dpd.plan.planner import make_plan
from tests.conftest import ROOT
from tests.hyperpod_dpd.cli.commands import leaf_commands
from tests.hyperpod_dpd.preflight.test_checks import addons, aws, offerings, quotas  # noqa: F401
from tests.hyperpod_dpd.test_canary import _project
from tests.hyperpod_dpd.test_canary import prometheus as canary_prometheus  # noqa: F401
from tests.hyperpod_dpd.verify.conftest import fake, verify  # noqa: F401
from tests.support.json_style import style_problems

pytestmark = pytest.mark.long

# Maps keyed by names, not keys (resource types, endpoints and pools, policies, file names).
DATA_MAPS = {
    ("plan",): {"byType"},
    "plan.json": {"coldStart", "numbers", "diffRules", "coldStart.*", "numbers.*"},
    ("diff",): {"manifests", "sizing", "numbers", "coherentChanges[].fields"},
    ("policy-config",): {"*"},  # CrossGuard's format: policy name -> its config
    ("advise",): {"recommendation.config", "recommendation.config.*"},  # the stack file's patch
}
# JSON-speaking commands whose fakes live beside their own tests, which hold their JSON to the
# same style.
ELSEWHERE = {
    ("checkpoint", "upload"): "tests/checkpoint/test_upload_local.py",
    ("checkpoint", "verify"): "tests/checkpoint/test_upload_local.py",
    ("rollout",): "tests/hyperpod_dpd/rollout/test_command.py",
}


def _speaks_json(command: argparse.ArgumentParser) -> bool:
    return any(a.dest == "format" and "json" in (a.choices or ()) for a in command._actions)


JSON_COMMANDS = [
    *sorted(p for p, c in leaf_commands(parser()) if _speaks_json(c)),
    ("policy-config",),
]


def _json(argv: list[str]) -> tuple[int, object]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, json.loads(out.getvalue())


def _plan(tmp_path, monkeypatch, request):
    code, doc = _json(["plan", "--stack", "dev", "--out", str(tmp_path / "p"), "--format", "json"])
    plan_json = json.loads((tmp_path / "p" / "plan.json").read_text())
    assert style_problems(plan_json, frozenset(DATA_MAPS["plan.json"])) == []
    return code, doc


def _size(tmp_path, monkeypatch, request):
    return _json(["size", "--format", "json"])


def _ci(tmp_path, monkeypatch, request):
    return _json(
        ["ci", "--stack", "prod", "--format", "json", "--run-id", "7", "--run-attempt", "1"]
    )


def _diff(tmp_path, monkeypatch, request):
    """The dev stack before and after a change that moves numbers, sizing and cost."""
    make_plan(ROOT, "dev", tmp_path / "base")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, project / name)
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    assert "pdBufferSize: 8GiB" in text
    (project / "Pulumi.dev.yaml").write_text(
        text.replace("pdBufferSize: 8GiB", "pdBufferSize: 12GiB")
    )
    make_plan(project, "dev", tmp_path / "head")
    return _json(["diff", str(tmp_path / "base"), str(tmp_path / "head"), "--format", "json"])


def _policy_config(tmp_path, monkeypatch, request):
    return _json(["policy-config", "--stack", "prod"])


def _preflight(tmp_path, monkeypatch, request):
    clients, stubs = request.getfixturevalue("aws")
    offerings(stubs, ["use2-az1"])
    quotas(stubs, 2.0)
    addons(stubs)
    import hyperpod_dpd.preflight.checks as preflight

    monkeypatch.setattr(preflight, "boto3_factory", lambda region: clients.__getitem__)
    return _json(["preflight", "--stack", "dev", "--format", "json"])


def _verify(tmp_path, monkeypatch, request):
    result = request.getfixturevalue("verify")()
    return result.code, result.json


def _canary(tmp_path, monkeypatch, request):
    server = request.getfixturevalue("canary_prometheus")
    monkeypatch.chdir(_project(tmp_path, "more-errors"))
    return _json(["canary", "--stack", "canary", "--prometheus-url", server.url,
                  "--format", "json"])  # fmt: skip


def _advise(tmp_path, monkeypatch, request):
    return _json(["advise", "--isl", "256", "--osl", "256", "--concurrency", "2",
                  "--max-nodes", "1", "--tpot-ms", "50", "--no-chart", "--format", "json"])  # fmt: skip


RUNS = {
    ("plan",): _plan,
    ("size",): _size,
    ("ci",): _ci,
    ("diff",): _diff,
    ("policy-config",): _policy_config,
    ("preflight",): _preflight,
    ("verify",): _verify,
    ("canary",): _canary,
    ("advise",): _advise,
}


def test_every_command_that_speaks_json_is_held_to_the_style():
    assert set(JSON_COMMANDS) == set(RUNS) | set(ELSEWHERE), (
        "a command that prints JSON is not run here: add it to RUNS (or ELSEWHERE)"
    )
    for path, test_file in ELSEWHERE.items():
        text = (ROOT / test_file).read_text()
        assert "style_problems" in text and " ".join(path[1:]) in text, (path, test_file)


@pytest.mark.parametrize("path", sorted(RUNS), ids=" ".join)
def test_the_json_is_camel_case_with_rounded_numbers(path, tmp_path, monkeypatch, request):
    code, doc = RUNS[path](tmp_path, monkeypatch, request)
    assert code in (0, 1), code  # printed: fine, or a verdict or check that failed
    assert style_problems(doc, frozenset(DATA_MAPS.get(path, ()))) == []
