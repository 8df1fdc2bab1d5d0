"""Every flag of every command, given hostile values, ends in exit 0, 1 or 2 and no traceback,
and an exit 2 names the flag: a command's flags are judged as a stack file's keys are.

The test walks the argparse tree itself (hyperpod_dpd/cli COMMANDS), so a command or flag added
later is covered without editing it. Each command gets the fewest other arguments that let it run
and fail fast past its flags (no AWS profile, no kubeconfig, no network): the table below, else
its required arguments from VALID by name, so a new command taking `--stack` runs with one. What
is judged: nothing a user can type reaches an internal error (exit 3) or a Python traceback, and
a refusal (exit 2) either names the flag given the hostile value or is the command's refusal
without it (the value was taken, and the run stopped where the other arguments make it stop).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperpod_dpd.cli
from hyperpod_dpd.cli import main, parser
from tests.conftest import ROOT
from tests.hyperpod_dpd.cli.commands import leaf_commands

# Commands that hand the process to another program (os.execve): not run in-process.
NOT_RUN = {("benchmark", "fake-server")}


def _walk(p: argparse.ArgumentParser, path: tuple[str, ...]):
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))
        elif action.dest != "help" and action.nargs != 0 and path not in NOT_RUN:
            yield path, action


FLAGS = sorted(
    ((path, action) for path, action in _walk(parser(), ())),
    key=lambda item: (item[0], item[1].dest),
)


# A valid value of a required argument, by its dest: what a command added later gets.
VALID = {
    "stack": lambda tmp: "canary",
    "project_dir": lambda tmp: str(ROOT),
    "out": lambda tmp: str(tmp / "out"),
    "endpoint": lambda tmp: "candidate",
    "name": lambda tmp: "x",
    "shell": lambda tmp: "bash",
}


COMMANDS = dict(leaf_commands(parser()))


def _required(path: tuple[str, ...], tmp) -> list[str]:
    """The command's required arguments, each at VALID's value for its dest."""
    out = []
    for action in COMMANDS[path]._actions:
        if action.required or (not action.option_strings and action.nargs != 0):
            assert action.dest in VALID, (
                f"{' '.join(path)}: no valid value for its required {action.dest}: add one to "
                "VALID or the command to _base, so its flags are judged"
            )
            value = VALID[action.dest](tmp)
            out += [action.option_strings[-1], value] if action.option_strings else [value]
    return out


def _base(path: tuple[str, ...], tmp) -> list[str]:
    """Other arguments of the command: valid, and such that it stops soon after its flags."""
    ckpt = tmp / "ckpt"
    ckpt.mkdir(exist_ok=True)
    given = {
        ("plan",): ["--stack", "dev", "--project-dir", str(ROOT), "--out", str(tmp / "plan")],
        ("preflight",): ["--stack", "dev", "--project-dir", str(ROOT)],
        ("policy-config",): ["--stack", "dev", "--project-dir", str(ROOT)],
        ("policy-pack",): ["--no-venv", "--out", str(tmp / "pack")],
        ("checkpoint", "upload"): ["--source", str(ckpt), "--dest", "s3://bucket-a/p"],
        ("checkpoint", "verify"): ["--dest", "s3://bucket-a/p"],
        ("diff",): [str(tmp / "a"), str(tmp / "b")],
        ("verify",): ["--name", "x"],
        ("benchmark", "run"): ["--out", str(tmp / "run")],
        ("benchmark", "compare"): [str(tmp / "a"), str(tmp / "b"), "--out", str(tmp / "r")],
        ("pulumi-yaml",): ["--check"],
        # The canary stack (a split with an SLO); a Prometheus nothing listens at, so a run that
        # takes every flag stops there (naming --prometheus-url), never asking AWS.
        ("canary",): ["--stack", "canary", "--prometheus-url", "http://127.0.0.1:9"],
        # The same judgement, as a dry run: nothing is written, no Pulumi is asked.
        ("rollout",): [
            "--stack",
            "canary",
            "--endpoint",
            "candidate",
            "--dry-run",
            "--prometheus-url",
            "http://127.0.0.1:9",
        ],
        ("demo",): ["--dry-run", "--out", str(tmp / "demo")],  # the demo runs for minutes
    }
    return given[path] if path in given else _required(path, tmp)


def _argv(path, action, value, tmp) -> list[str]:
    base = _base(path, tmp)
    if not action.option_strings:  # a positional: the hostile value in its place
        positional = [a for a in base if not a.startswith("--")][:1]
        rest = [a for a in base if a not in positional]
        return [*path, value, *rest] if action.nargs != "+" else [*path, value, value, *rest]
    flag = action.option_strings[-1]
    base = [a for i, a in enumerate(base) if a != flag and (i == 0 or base[i - 1] != flag)]
    return [*path, *base, flag, value]


def _hostile(tmp) -> list[str]:
    binary = tmp / "binary"
    binary.write_bytes(bytes(range(256)) * 4)
    a_dir = tmp / "a-dir"
    a_dir.mkdir(exist_ok=True)
    return [
        str(tmp / "nonexistent" / "x"), str(a_dir), str(binary), "/proc", "/proc/self/status", "",
        "not-a-url", "http://[::1", "nan", "inf", "-inf", "-1", "-0.5", "0", "x" * 5000,
        "\udcff\udcfe-not-utf8", "../../etc/passwd", "nul\x00byte",
    ]  # fmt: skip


@pytest.fixture(autouse=True, scope="module")
def _one_command_line():
    """The command line built once for this module's 1,330 runs of main, as each process of the
    console script builds it once: building it was half their CPU (3.7 ms a build). Parsing
    leaves a parser as it was, and nothing here changes what building it reads."""
    built = parser()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hyperpod_dpd.cli, "parser", lambda: built)
        yield


@pytest.fixture(scope="module")
def _examples(tmp_path_factory):
    """The directory of the examples' own directories: tempfile names each (pytest's mktemp
    numbers them by listing the directory it makes them in, its numbered siblings one by one: the
    1,330 examples' made that 900,000 names parsed)."""
    return tmp_path_factory.mktemp("hostile")


@pytest.mark.long
@pytest.mark.parametrize(
    ("path", "action"), FLAGS, ids=[f"{' '.join(p)} {a.dest}" for p, a in FLAGS]
)
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_hostile_value_never_reaches_a_traceback(
    path, action, data, tmp_path_factory, _examples, capsys, monkeypatch
):
    tmp = Path(tempfile.mkdtemp(dir=_examples))
    # Files no command writes, the same for every example: the providers' SDKs read these
    # variables, so a plan's program run is reused only under the same ones (tests/support/program_runs.py
    # provider_environment), and a path of each example's own made every example run it again.
    nowhere = tmp_path_factory.getbasetemp() / "nowhere"
    if path[0] in ("preflight", "checkpoint", "canary", "rollout", "fetch"):  # AWS: none at all
        monkeypatch.setenv("AWS_PROFILE", "hyperpod-dpd-no-such-profile")
        monkeypatch.setenv("AWS_CONFIG_FILE", str(nowhere / "no-aws-config"))
        monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(nowhere / "no-aws-credentials"))
        monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("KUBECONFIG", str(nowhere / "no-kubeconfig"))
    # Every path a command may write lands in this example's own directory: relative ones
    # (`../../etc/passwd` included) resolve below it, and drawn text never starts with "/". As
    # root (CI), a shared path such as /nonexistent/x would be made, then raced for by the other
    # workers, and the next example would find it there.
    cwd = tmp / "cwd" / "deeper"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    drawn = st.text(max_size=40).filter(lambda text: not text.startswith("/"))
    value = data.draw(st.sampled_from(_hostile(tmp)) | drawn, label="value")
    argv = _argv(path, action, value, tmp)
    code, output = _run(argv, capsys)
    shown = [a if len(a) < 60 else a[:30] + f"...({len(a)} chars)" for a in argv]
    assert code in (0, 1, 2), f"{shown} -> exit {code}: {output[-400:]}"
    assert "Traceback" not in output and "internal error" not in output, output[-400:]
    if code == 2 and action.option_strings and not any(f in output for f in action.option_strings):
        # Not about this flag: the value was taken and the run stopped where it stops without
        # it (the base's own refusal), word for word. (A positional's refusal may name the
        # other one's value: diff judges BASE and HEAD together.)
        assert _run([*path, *_base(path, tmp)], capsys) == (code, output), (
            f"{shown} -> exit 2 naming none of {action.option_strings}: {output[-400:]}"
        )


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exited:  # argparse's own refusal (exit 2) or --help (0)
        code = exited.code
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_every_command_runs_with_its_other_arguments(tmp_path):
    """Each command of the CLI (a later one too) parses with the arguments the hostile test
    gives it: its flags are reached, not refused as a missing --stack."""
    assert {p[0] for p in COMMANDS} >= {"plan", "canary", "fetch", "ci", "size", "advise"}
    for path in COMMANDS:
        if path in NOT_RUN:
            continue
        parser().parse_args([*path, *_base(path, tmp_path)])
