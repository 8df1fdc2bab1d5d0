"""Every fix hint the project prints works: applied to the stack it was
shown for, the stack is judged again as the plan judges it before it creates anything (the config
checks, then the policy gate) and that problem is gone.

The stacks are the ones the settings tests and the gate tests build, recorded as they run
(tests/fix_hints/recorder.py: a check added later is audited without editing this file), and the
few below whose problems only a whole stack shows. In a session that runs those tests (the whole
suite), the audit reads what they handed in this session; in one that does not, it runs them in a
pytest of its own, whose recording is kept for the checkout it was made of
(build/test-cache/fix-hints, by every file's content): the next run of an unchanged checkout
replays the same stacks without running those tests again. A hint is followed as a user would follow it
(tests/fix_hints/edits.py): the `pulumi config set|rm` line it prints, with the value the CLI would
store, or the keys and values its prose names. A hint without a concrete value is allowed only
for what only the user knows (USER_CHOICES, USER_SECTIONS) or what no value fixes
(NO_VALUE_FIXES); every other one must name one.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel

from hyperpod_dpd.plan.planner import make_plan
from policies.gate import judge
from settings import ConfigError, StackSettings, parse_settings
from specs.desired import desired_state
from tests.conftest import ROOT, edit, stack_raw, write_project
from tests.fix_hints import recorded_tests, recorder
from tests.fix_hints.edits import apply, cli_value, parse_key, suggestions
from tests.fix_hints.handed_stacks import Handed
from tests.support import tool_cache
from tests.support.program_runs import checkout_digest, exclusive, shared_runs_env, write_whole

NS = "hyperpod-dpd"


def _extra_stacks() -> list[tuple[str, dict[str, Any]]]:
    """Stacks the recorded tests judge piecewise (a policy on a resource view), whole here."""
    out = []

    def variant(name, stack="dev", **edits):
        raw = stack_raw(stack)
        for path, value in edits.items():
            top, dotted, _ = path.partition("__")
            if dotted:
                raw.setdefault(top, {})
            edit(raw, path.replace("__", "."), value)
        out.append((name, raw))

    e = f"{NS}:endpoint"
    variant("405B on H100", **{f"{e}__model": "llama-3.1-405b"})
    variant("70B, no room beside vLLM's share", **{f"{e}__gpuMemoryUtilization": 0.99})
    variant("70B, share too small", **{f"{e}__gpuMemoryUtilization": 0.22})
    variant("70B at TP 2", **{f"{e}__tensorParallelSize": 2})
    variant("a PD buffer that cannot hold one prompt", **{f"{e}__pdBufferSize": "256MiB"})
    variant("expected load beyond the buffer", **{f"{e}__expectedInFlightTransfers": 200})
    variant("threshold below one chunk", **{f"{e}__routingThreshold": 100})
    variant("random hash seed", **{f"{e}__environmentVariables": {"PYTHONHASHSEED": "random"}})
    variant("token in plaintext", **{f"{e}__environmentVariables": {"HF_TOKEN": "hf_abcdefgh"}})
    variant("more replicas than nodes", **{f"{e}__decode__replicas": 3})
    variant("a GPU type DPD does not run on",
            **{f"{NS}:instanceGroups__decode__instanceType": "ml.g6e.48xlarge",
               f"{NS}:instanceGroups__prefill__instanceType": "ml.g6e.48xlarge"})  # fmt: skip
    variant("canary candidate's share too small", "canary",
            **{f"{NS}:endpoints__candidate__gpuMemoryUtilization": 0.3})  # fmt: skip
    variant("TP that does not divide the heads", **{f"{e}__tensorParallelSize": 3})
    variant("TP above one node", **{f"{e}__tensorParallelSize": 16})
    variant("the decoder's own TP", **{f"{e}__decode__tensorParallelSize": 5})
    variant("prompts longer than the context", **{f"{e}__expectedPromptTokens": 40000})
    variant("canary candidate's PD buffer", "canary",
            **{f"{NS}:endpoints__candidate__pdBufferSize": "256MiB"})  # fmt: skip
    # Numbers given again where they override the typed keys (settings/endpoint/numbers.py): the fixes
    # name those places, and following them there works.
    variant("a PD buffer short of one prompt, in environmentVariables",
            **{f"{e}__environmentVariables": {"PD_BUFFER_SIZE": "256MiB"}})  # fmt: skip
    variant("a PD buffer beside too large a share, in environmentVariables",
            **{f"{e}__environmentVariables": {"PD_BUFFER_SIZE": "32GiB"}})  # fmt: skip
    variant("the decoder's utilization in its args",
            **{f"{e}__decode__args": ["--gpu-memory-utilization", "0.9", "--max-model-len=8192"]})  # fmt: skip
    variant("the prefiller's share too small, in its args",
            **{f"{e}__prefill__args": ["--gpu-memory-utilization=0.22"]})  # fmt: skip
    # Every number, switch and word-choice key of the model given a word it cannot take: each
    # such key's fix is audited, tested by a settings test or not.
    for path in _scalar_keys(StackSettings, ()):
        variant(f"a word for {path}", **{f"{NS}:{path.replace('.', '__')}": "lots"})
    return out


def _scalar_keys(model: type[BaseModel], prefix: tuple[str, ...]) -> list[str]:
    """The keys of numbers, booleans and literals under `model` (the instance groups' under the
    dev stack's decode group)."""
    keys = []
    for name, field in model.model_fields.items():
        alias = field.alias or name
        if not prefix and alias == "region":
            continue  # aws:region: a Region is the user's choice
        kind = field.annotation
        options = [a for a in get_args(kind) if a is not type(None)]
        inner = options[0] if get_origin(kind) is not Literal and len(options) == 1 else kind
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            keys += _scalar_keys(inner, (*prefix, alias))
        elif get_origin(inner) is dict and alias == "instanceGroups":
            keys += _scalar_keys(get_args(inner)[1], (*prefix, alias, "decode"))
        elif inner in (int, float, bool) or get_origin(inner) is Literal:
            keys.append(".".join((*prefix, alias)))
    return keys


# Values only the user can know: a hint may say what to find and where, without a value. A key
# here covers its list items and map entries too.
USER_CHOICES = {
    f"{NS}:checkpoint.revision": "the commit they mean",
    f"{NS}:checkpoint.source": "where their weights are",
    f"{NS}:checkpoint.bucketName": "a bucket name of theirs",
    f"{NS}:endpoints.{{}}.checkpoint.revision": "the commit they mean",
    f"{NS}:endpoints.{{}}.checkpoint.source": "where their weights are",
    f"{NS}:hfToken": "their token",
    f"{NS}:eks.adminRoleArns": "their roles",
    f"{NS}:eks.viewRoleArns": "their roles",
    f"{NS}:deployerArns": "their deploying roles",
    f"{NS}:eks.publicAccessCidrs": "their networks",
    f"{NS}:trafficListener.certificateArn": "their certificate",
    f"{NS}:trafficListener.domainName": "the name their clients call",
    f"{NS}:trafficListener.hostedZoneId": "their private hosted zone",
    f"{NS}:trafficListener.allowedCidrs": "their clients' networks",
    f"{NS}:trafficListener.allowedSecurityGroupIds": "their clients' groups",
    f"{NS}:instanceGroups.{{}}.trainingPlanArn": "the plan they bought",
    f"{NS}:cost.hourlyPrices": "the prices they pay",
    f"{NS}:endpoint.model": "their model (a catalog name or their config.json)",
    f"{NS}:endpoints.{{}}.model": "their model (a catalog name or their config.json)",
    f"{NS}:ci.repository": "their repository",
    f"{NS}:ci.connectionArn": "the connection they made in the console",
    f"{NS}:ci.deployRoleArn": "their deploy role (ci/aws-github-oidc.yaml's output)",
    f"{NS}:ci.previewRoleArn": "their preview role (ci/aws-github-oidc.yaml's output)",
    f"{NS}:ci.pulumiOrganization": "their organization",
    f"{NS}:ci.labels": "their runner's labels",
    f"{NS}:observability.alertSubscriptions": "their on-call addresses",
    "aws:region": "where their capacity is",
    f"{NS}:availabilityZoneId": "where their capacity is",
}
# Whole sections left out: the example stacks and the README show one; the values are the
# user's (their capacity, their AZs).
USER_SECTIONS = {f"{NS}:instanceGroups", f"{NS}:network", f"{NS}:network.controlPlaneAzIds"}
# Problems no value fixes, with the words of the hint that say what does.
NO_VALUE_FIXES = {
    (f"{NS}:network.vpcCidr", "even a /16 VPC cannot hold"): "fewer nodes or another stack",
    # An advisory: DPD on a small model works, it seldom pays; the user measures both modes.
    ("hyperpod-dpd-model-size", "benchmark both"): "a benchmark, not a value",
    # The digest is the registry's: `hyperpod-dpd fetch --stack` asks it and prints the line.
    ("hyperpod-dpd-images-by-digest", "hyperpod-dpd fetch --stack"): "the registry's digest",
}


@dataclass(frozen=True)
class Problem:
    """One problem as the plan reports it: its identity and the hint printed with it."""

    key: str  # config key (or policy@urn)
    rule: str  # what is allowed (config), or what a policy found, numbers aside
    hint: str

    def same(self, other: Problem) -> bool:
        return (self.key, self.rule) == (other.key, other.rule)


def _finding(message: str) -> str:
    """What a policy found, without its numbers: the text before the fix ("...: fix" or
    "...; fix"), digits dropped, so the same finding with other numbers is still the same."""
    return re.sub(r"[0-9.]+", "N", re.split(r"[:;]", message, maxsplit=1)[0])


def judged(raw: dict[str, Any], secret_keys: tuple[str, ...] = ()) -> list[Problem]:
    """What the plan refuses or warns about, before anything is created (judged once per
    stack: a quarter of the stacks the audit judges are the same stack reached twice)."""
    key = json.dumps([raw, secret_keys], sort_keys=True, default=repr)
    if key not in _JUDGED:
        _JUDGED[key] = tuple(_judge(raw, secret_keys))
    return list(_JUDGED[key])


_JUDGED: dict[str, tuple[Problem, ...]] = {}


def _judge(raw: dict[str, Any], secret_keys: tuple[str, ...]) -> list[Problem]:
    try:
        s = parse_settings(raw, secret_keys)
    except ConfigError as error:
        return [Problem(p.key, p.allowed, p.fix) for p in error.problems]
    return [
        Problem(f"{v.policy}@{v.urn}", _finding(v.message), v.message)
        for v in judge(desired_state(s, NS, "dev", has_hf_token=bool(secret_keys)))
    ]


# The recordings, by what decides them (_sources_digest): a checkout the recording run has seen
# as it is gets its stacks from here instead of running the recorded tests again.
RECORDINGS = ROOT / "build" / "test-cache" / "fix-hints"


def _sources_digest(root: Path = ROOT) -> str | None:
    """What decides the stacks the recorded tests hand parse_settings: every file of the checkout
    that git sees (the recorded tests, the code they run, the stack files, the locks .venv is
    synced to; new files too), by path and content, and this Python. None outside a git
    checkout: then every run records."""
    digest = checkout_digest(root)
    return digest and tool_cache.key(digest, sys.version)


def _recorded_stacks(out: Path) -> tuple[tuple[str, bytes], ...]:
    """Every stack the recorded tests give parse_settings, once each: as they gave them in this
    session (recorder.in_session), else kept from the last recording of this very checkout
    (_sources_digest), else recorded now."""
    in_session = recorder.in_session()
    if in_session is not None:
        return _unique(in_session)
    digest = _sources_digest()
    if digest is None:
        return _unique(pickle.loads(_record(out)))
    RECORDINGS.mkdir(parents=True, exist_ok=True)
    kept = RECORDINGS / f"{digest}.pickle"
    with exclusive(RECORDINGS / ".lock"):
        if not kept.exists():
            recording = _record(out)
            for old in RECORDINGS.glob("*.pickle"):  # of a checkout as it no longer is
                old.unlink()
            write_whole(kept, recording)
        return _unique(pickle.loads(kept.read_bytes()))


def _record(out: Path) -> bytes:
    """Run the recorded tests in a pytest of their own: the stacks given to parse_settings,
    pickled. The program runs of those tests are this session's (shared_runs_env): the same
    configs run once for both."""
    env = {**os.environ, "HINT_RECORD": str(out), **shared_runs_env()}
    skipped = " and ".join(f"not {name}" for name in recorded_tests.NOT_RECORDED)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider", "-x",
         "-k", skipped, *recorded_tests.RECORDED],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out.read_bytes()


def _unique(recording: list[Handed]) -> tuple[tuple[str, bytes], ...]:
    unique: dict[str, tuple[str, bytes]] = {}
    for raw, secret_keys in recording:
        text = json.dumps([raw, secret_keys], sort_keys=True, default=repr)
        unique.setdefault(text, (text[:60], pickle.dumps((raw, secret_keys))))
    return tuple(unique.values())


def _cases(out: Path) -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    cases = [(name, raw, ()) for name, raw in _extra_stacks()]
    for label, blob in _recorded_stacks(out):
        raw, secret_keys = pickle.loads(blob)
        cases.append((label, raw, tuple(secret_keys)))
    return cases


def _without_value_allowed(problem: Problem) -> bool:
    """A hint without a value is allowed for the user's own values and what no value fixes."""
    key = problem.key
    for choice in USER_CHOICES:
        head, _, tail = choice.partition("{}")
        if tail and key.startswith(head) and key.endswith(tail):
            return True
        if key == choice or key.startswith((choice + "[", choice + ".")):
            return True
    if key in USER_SECTIONS and problem.rule.startswith("a value is required"):
        return True
    policy = key.partition("@")[0]  # a policy finding's key: policy@urn
    return any(k in (key, policy) and words in problem.hint for k, words in NO_VALUE_FIXES)


@dataclass
class Audit:
    followed: list[str]
    broken: list[str]
    valueless: list[str]
    deleting: list[str]  # a misspelled key's fix that drops its value instead of renaming it


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> Audit:
    result = Audit([], [], [], [])
    stacks = tmp_path_factory.mktemp("fix-hints") / "stacks.pickle"
    for name, raw, secret_keys in _cases(stacks):
        for problem in judged(raw, secret_keys):
            where = f"[{name}] {problem.key}: {problem.hint}"
            alternatives = suggestions(problem.hint)
            if not alternatives:
                if not _without_value_allowed(problem):
                    result.valueless.append(where)
                continue
            misspelled = re.search(r"did you mean '[^']+'\?", problem.hint)
            renamed = any(e.op == "rename" for e in alternatives[0])
            if misspelled and "set already" not in problem.hint and not renamed:
                result.deleting.append(where)
            for edits in alternatives:
                after = judged(apply(raw, edits), secret_keys)
                if any(problem.same(p) for p in after):
                    result.broken.append(f"{where}\n    applied {edits}, still: "
                                         + next(p.hint for p in after if problem.same(p)))  # fmt: skip
                else:
                    result.followed.append(where)
    return result


# The tests reading the audit: one worker runs them, after the recorded tests of their group
# (tests/fix_hints/recorded_tests.py).
@pytest.mark.long
@pytest.mark.xdist_group(recorded_tests.GROUP)
def test_every_followed_hint_makes_its_problem_go_away(audit):
    assert not audit.broken, "\n".join(audit.broken)
    # The recorded tests do exercise the checks: far more than a handful of hints are followed
    # (256 when this was written).
    assert len(audit.followed) >= 200, len(audit.followed)


@pytest.mark.long
@pytest.mark.xdist_group(recorded_tests.GROUP)
def test_every_hint_names_a_value_unless_only_the_user_knows_it(audit):
    assert not audit.valueless, "\n".join(audit.valueless)


@pytest.mark.long
@pytest.mark.xdist_group(recorded_tests.GROUP)
def test_a_misspelled_key_is_renamed_not_deleted(audit):
    """'did you mean X?' is followed by renaming the key to X, its value kept."""
    assert not audit.deleting, "\n".join(audit.deleting)


@pytest.mark.xdist_group(recorded_tests.GROUP)
def test_a_session_of_the_recorded_tests_audits_the_stacks_they_handed_in_it(audit, request):
    """The whole suite runs the recorded tests anyway: the audit reads what they handed
    parse_settings as they ran, in its worker (tests/fix_hints/recorded_tests.py), instead of
    running them again in a pytest of its own (13 s of CPU). Under --dist load they run on any
    worker, and the audit runs them again."""
    together = request.config.getoption("dist", "no") in ("no", "loadgroup")
    if recorder.has_every_recorded_test() and together:
        assert recorder.in_session() is not None, "the recorded tests ran in another process"


# --- following a hint as printed: the reader the audit relies on -----------------------------


@pytest.mark.parametrize(
    ("text", "path", "stored"),
    [("true", True, True), ("5", True, 5), ("0123", True, "0123"), ("0.75", True, "0.75"),
     ("5", False, "5"), ("True", True, "True")],
)  # fmt: skip
def test_a_value_is_stored_as_pulumi_config_set_stores_it(text, path, stored):
    assert cli_value(text, path) == stored


def test_a_map_key_with_dots_is_one_path_segment():
    assert parse_key(f'{NS}:cost.hourlyPrices["ml.p5.48xlarge"]') == (
        f"{NS}:cost",
        ["hourlyPrices", "ml.p5.48xlarge"],
    )
    assert parse_key(f"{NS}:eks.publicAccessCidrs[0]") == (f"{NS}:eks", ["publicAccessCidrs", 0])


def test_an_args_hint_edits_the_list_it_names():
    raw = {f"{NS}:endpoint": {"decode": {"args": ["--port", "9000", "--max-num-seqs=0", "x"]}}}
    key = f"{NS}:endpoint.decode.args"
    for hint, args in [
        (f"remove --port from {key}", ["--max-num-seqs=0", "x"]),
        (f"set --max-num-seqs in {key} to 1", ["--port", "9000", "x", "--max-num-seqs", "1"]),
        (f"remove 'x' from {key}, or put its --flag before it", ["--port", "9000", "--max-num-seqs=0"]),
    ]:  # fmt: skip
        [edits] = suggestions(hint)
        assert apply(raw, edits)[f"{NS}:endpoint"]["decode"]["args"] == args, hint


def test_the_first_suggestion_is_followed_and_joined_edits_together():
    a, b = f"{NS}:instanceGroups.a.instanceType", f"{NS}:instanceGroups.b.instanceType"
    [edits] = suggestions(f"set {a} and {b} to ml.p5.48xlarge, or set {NS}:endpoint.mode to x")
    assert [(e.key, e.value) for e in edits] == [(a, "ml.p5.48xlarge"), (b, "ml.p5.48xlarge")]
    assert suggestions(f"set {a} to one of them") == []
    assert len(suggestions(f"set {NS}:endpoint.gpuMemoryUtilization between 0.8 and 0.9")) == 2


def test_a_nested_key_without_path_is_followed_as_the_cli_takes_it():
    """Without --path, `pulumi config set|rm` take 'hyperpod-dpd:endpoint.mode' as the name of
    a top-level key: a hint that forgets --path must not pass the audit as if it had it."""
    key = f"{NS}:endpoint.mode"
    raw = {f"{NS}:endpoint": {"mode": "dpd"}}
    [edits] = suggestions(f"pulumi config set '{key}' colocated")
    assert apply(raw, edits) == {f"{NS}:endpoint": {"mode": "dpd"}, key: "colocated"}
    [edits] = suggestions(f"pulumi config rm '{key}'")
    assert apply(raw, edits) == raw
    [edits] = suggestions(f"pulumi config set --path '{key}' colocated")
    assert apply(raw, edits) == {f"{NS}:endpoint": {"mode": "colocated"}}
    assert parse_key(f'{NS}:cost.hourlyPrices["a\\"b"]') == (f"{NS}:cost", ["hourlyPrices", 'a"b'])


@pytest.mark.long
@pytest.mark.parametrize(
    "name", ["405B on H100", "70B, share too small", "TP that does not divide the heads"]
)
def test_a_followed_fix_plans_in_full(name, tmp_path):
    """The audit judges as the plan does before its program runs; here the whole plan runs on
    a followed fix: the stack is read, judged and run, and the program registers everything."""
    raw = dict(_extra_stacks())[name]
    [problem] = [p for p in judged(raw) if suggestions(p.hint)][:1]
    fixed = apply(raw, suggestions(problem.hint)[0])
    plan = make_plan(write_project(tmp_path / "project", fixed), "dev", tmp_path / "plan")
    assert not plan.stopped and plan.run.resources
    assert not any(problem.same(p) for p in judged(fixed))


# --- the hints commands print besides the stack's own checks ----------------------------------


def _followed_line(raw: dict[str, Any], line: str) -> dict[str, Any]:
    """`raw` after each `pulumi config set` of a `cmd && cmd && ...` line, as the CLI runs them."""
    for command in line.split(" && "):
        if command.startswith("pulumi config"):
            [edits, *_] = suggestions(command)
            raw = apply(raw, edits)
    return raw


def _plans_without_a_stop(raw: dict[str, Any], stack: str) -> list[str]:
    """What would stop `make plan` of `raw` (exit 1 or 2): config problems, mandatory findings."""
    try:
        s = parse_settings(raw)
    except ConfigError as error:
        return [p.render() for p in error.problems]
    desired = desired_state(s, NS, stack)
    return [v.message for v in judge(desired) if v.enforcement == "mandatory"]


def test_every_canary_next_line_followed_plans():
    """The canary's `next:` (promote to the next step, or roll back), at every step of the
    split, followed as printed on the canary stack: it plans (exit 0), and moves the weights."""
    from specs.traffic_steps import promote_command, rollback_command

    raw = stack_raw("canary")
    seen = 0
    while True:
        traffic = raw[f"{NS}:traffic"]
        back = rollback_command(traffic, "candidate", "canary")
        assert "--stack canary" in back
        rolled = _followed_line(raw, back)
        assert _plans_without_a_stop(rolled, "canary") == [], back
        assert rolled[f"{NS}:traffic"]["candidate"] == 0
        step = promote_command(traffic, "candidate", "canary")
        if step is None:
            break
        raw = _followed_line(raw, step)
        assert _plans_without_a_stop(raw, "canary") == [], step
        seen += 1
    assert seen == 3 and raw[f"{NS}:traffic"]["candidate"] == 100  # 5 -> 25 -> 50 -> 100


def test_the_alerts_rollback_lines_followed_plan():
    """A candidate's alert says how to roll it back: followed, the stack plans."""
    from specs.slo.rules import rule_file

    raw = stack_raw("canary")
    actions = {
        r["annotations"]["action"]
        for g in rule_file(parse_settings(raw), "canary")["groups"]
        for r in g["rules"]
        if "alert" in r and r["labels"]["endpoint"] == "candidate"
    }
    lines = {a.split("Roll the candidate back: ", 1)[1].split("; then", 1)[0] for a in actions}
    assert len(lines) == 1
    assert _plans_without_a_stop(_followed_line(raw, lines.pop()), "canary") == []


def test_a_recording_is_kept_only_for_the_checkout_as_it_was(tmp_path):
    """Any change git sees (a file edited, a new file) records again; what git ignores does not."""
    run = ["git", "-C", str(tmp_path)]
    subprocess.run([*run, "init", "--quiet"], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "checks.py").write_text("LIMIT = 1\n")
    subprocess.run([*run, "add", "."], check=True)
    first = _sources_digest(tmp_path)
    assert first is not None and _sources_digest(tmp_path) == first
    (tmp_path / "checks.py").write_text("LIMIT = 2\n")
    edited = _sources_digest(tmp_path)
    (tmp_path / "new_check.py").write_text("")
    added = _sources_digest(tmp_path)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "cache.bin").write_text("x")
    assert len({first, edited, added}) == 3 and _sources_digest(tmp_path) == added
