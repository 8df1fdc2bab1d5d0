"""The rollout's world in the tests: a real Prometheus serving a healthy, a failing and a quiet
candidate (each beside its baseline, in a namespace of its own: synthetic series of the pinned
vLLM, backfilled with promtool, as tests/hyperpod_dpd/test_canary.py does); a project holding
the canary stack with its endpoints in one of those namespaces, in a git repository of its
own; and the stand-in `pulumi` (pulumi_standin.py) on PATH, its stack deployed as the stack
file says."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hyperpod_dpd.demo.vllm_traffic import Minute, decode_minute, prefill_minute, serve_canary
from tests.conftest import ROOT

MINUTES = 40
STACK = "canary"
WEIGHTS = "    baseline: 95\n    candidate: 5"  # as Pulumi.canary.yaml writes them
# scenario (a namespace) -> (baseline minute, candidate prefill minute, candidate decode minute)
SCENARIOS = {
    "healthy": (Minute(), prefill_minute(), decode_minute()),
    "failing": (Minute(errors=1), prefill_minute(), decode_minute(errors=12)),
    "quiet": (Minute(), prefill_minute(requests=20), decode_minute(requests=20)),
}
ROUTED = "aws:lb/listenerRule:ListenerRule"  # the forward by weight (specs/traffic/__init__.py)
HOUR = 3600
FRESH_SECONDS = 300  # a server older than this is started again: see `prometheus`


@pytest.fixture(scope="session")
def _servers():
    held: dict[str, tuple] = {}
    yield held
    if held:
        held["server"][0].stop()


@pytest.fixture
def prometheus(_servers, tmp_path_factory):
    """The server, its series ending no more than FRESH_SECONDS ago: its backfilled minutes end
    when it starts, and a 30m window read much later would find fewer requests than a verdict
    needs (a parallel suite may run these tests long after the first one)."""
    server, born = _servers.get("server", (None, 0.0))
    if server is None or time.monotonic() - born > FRESH_SECONDS:
        if server is not None:
            server.stop()
        server = serve_canary(tmp_path_factory.mktemp("prom"), SCENARIOS, MINUTES)
        _servers["server"] = (server, time.monotonic())
    return server


def git(project: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture(scope="session")
def _projects(tmp_path_factory):
    """Each (scenario, weights) project made once a session, for the tests to copy: a copy is
    the same files and the same repository, for a fraction of a `git init` and a commit."""
    made: dict[tuple[str, tuple[int, int]], Path] = {}

    def project(directory: Path, scenario: str, weights: tuple[int, int]) -> Path:
        key = (scenario, weights)
        if key not in made:
            made[key] = make_project(tmp_path_factory.mktemp("project") / "project", *key)
        shutil.copytree(made[key], directory, symlinks=True)
        return directory

    return project


def make_project(directory: Path, scenario: str, weights: tuple[int, int] = (95, 5)) -> Path:
    """The canary stack (its file's text, comments and all) with its endpoints in `scenario`'s
    namespace and the split at `weights`, committed in a repository of its own."""
    directory.mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        (directory / name).write_text((ROOT / name).read_text())
    text = (ROOT / f"Pulumi.{STACK}.yaml").read_text()
    assert WEIGHTS in text and "namespace: inference" in text
    text = text.replace("namespace: inference", f"namespace: {scenario}")
    text = text.replace(WEIGHTS, f"    baseline: {weights[0]}\n    candidate: {weights[1]}")
    (directory / f"Pulumi.{STACK}.yaml").write_text(text)
    (directory / ".gitignore").write_text(".hyperpod-dpd/\nbuild/\n")
    (directory / "build").mkdir()
    (directory / "build" / "policy-pack").symlink_to(ROOT / "build" / "policy-pack")
    git(directory, "init", "--quiet", "--initial-branch", "main")
    git(directory, "config", "user.name", "Rollout Test")
    git(directory, "config", "user.email", "rollout@example.com")
    git(directory, "add", ".")
    git(directory, "commit", "--quiet", "-m", "the canary stack")
    return directory


@dataclass
class StandIn:
    """The stand-in CLI's state file, and PATH with it first."""

    state_file: Path
    bin_dir: Path

    def state(self) -> dict:
        return json.loads(self.state_file.read_text())

    def edit(self, **changes) -> None:
        state = self.state()
        state.update(changes)
        self.state_file.write_text(json.dumps(state))

    def stack(self) -> dict:
        return self.state()["stacks"][STACK]

    def edit_stack(self, **changes) -> None:
        state = self.state()
        state["stacks"][STACK].update(changes)
        self.state_file.write_text(json.dumps(state))

    def calls(self) -> list[list[str]]:
        return self.state()["calls"]

    def commands(self) -> list[str]:
        """The calls as `pulumi <first words>` (the command, without its flags)."""
        out = []
        for call in self.calls():
            words = [w for w in call if not w.startswith("--")]
            out.append(" ".join(words[:2] if words[0] in ("stack", "config") else words[:1]))
        return out

    def env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{self.bin_dir}{os.pathsep}{os.environ['PATH']}",
                "PULUMI_STANDIN_STATE": str(self.state_file)}  # fmt: skip


# A stack file's text -> the resources of its offline plan (the stand-in's deployed stack).
_DEPLOYED: dict[str, list[dict]] = {}


def install_standin(project: Path, directory: Path, monkeypatch) -> StandIn:
    """The stand-in on PATH, its stack deployed an hour ago as the stack file says, with the
    resources of the stack's offline plan (the listener rule its routed one)."""
    from hyperpod_dpd.rollout.routing import plan_with
    from settings.stack_file import read_stack

    read = read_stack(project, STACK)
    traffic = dict(read.settings.traffic)
    text = (project / f"Pulumi.{STACK}.yaml").read_text()
    if text not in _DEPLOYED:  # the plan of a stack file is the same plan in each copy
        _DEPLOYED[text] = list(plan_with(project, read, traffic).resources.values())
    resources = _DEPLOYED[text]
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    script = bin_dir / "pulumi"
    # Started without `site` (-S -I), the venv's .pth files among it, most of a call's start-up
    # (the Automation API makes a dozen calls a step): the packages the stand-in imports are
    # found in the venv's site-packages all the same (after the standard library, where `site`
    # puts them), and the stand-in from its compiled module.
    here, packages = str(Path(__file__).parent), site.getsitepackages()
    script.write_text(f"#!{sys.executable} -SI\nimport sys\nsys.path.insert(0, {here!r})\n"
                      f"sys.path.extend({packages!r})\nimport pulumi_standin\n"
                      "sys.exit(pulumi_standin.main(sys.argv[1:]))\n")  # fmt: skip
    script.chmod(0o755)
    import yaml

    config = yaml.safe_load(text)["config"]
    from tests.hyperpod_dpd.rollout.pulumi_standin import _history_config, _time

    stack = {
        "deployed": {"config": config, "outputs": {"trafficWeights": traffic,
                                                   "trafficUrl": "https://split.internal/v1"}},
        "resources": [{"urn": r["urn"], "type": r["type"]} for r in resources],
        "routes": [r["urn"] for r in resources if r["type"] == ROUTED],
        "pending": [],
        "history": [{
            "version": 1, "kind": "update", "startTime": _time(HOUR + 600),
            "endTime": _time(HOUR), "message": "", "environment": {},
            "config": _history_config(config), "result": "succeeded",
            "resourceChanges": {"create": len(resources)},
        }],
    }  # fmt: skip
    state_file = directory / "standin.json"
    state_file.write_text(json.dumps({"calls": [], "stacks": {STACK: stack}}))
    standin = StandIn(state_file, bin_dir)
    monkeypatch.setenv("PATH", standin.env()["PATH"])
    monkeypatch.setenv("PULUMI_STANDIN_STATE", str(state_file))
    return standin


@pytest.fixture
def world(tmp_path, monkeypatch, _projects):
    """world(scenario, weights) -> (project, stand-in)."""

    def make(scenario: str, weights: tuple[int, int] = (95, 5)):
        project = _projects(tmp_path / "project", scenario, weights)
        return project, install_standin(project, tmp_path, monkeypatch)

    return make
