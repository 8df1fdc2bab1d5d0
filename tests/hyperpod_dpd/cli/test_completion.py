"""`hyperpod-dpd completion bash` completes in a real bash: commands, flags, choices and the
stacks of the project in the current directory."""

from __future__ import annotations

import contextlib
import io
import shlex
import subprocess

import pytest

from hyperpod_dpd.cli import main
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    out = tmp_path_factory.mktemp("completion") / "hyperpod-dpd.bash"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["completion", "bash"]) == 0
    out.write_text(printed.getvalue())
    return out


def _complete(script, line: str) -> list[str]:
    """What bash offers at the end of `line` (a trailing space: a new word)."""
    words = shlex.split(line) + ([""] if line.endswith(" ") else [])
    program = f"""
source {shlex.quote(str(script))}
COMP_WORDS=({" ".join(shlex.quote(w) for w in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE={shlex.quote(line)}
COMP_POINT={len(line)}
_shtab_hyperpod_dpd
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    run = subprocess.run(["bash", "-c", program], cwd=ROOT, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return sorted(w for w in run.stdout.splitlines() if w)


def test_commands_complete(bash_script):
    assert _complete(bash_script, "hyperpod-dpd pl") == ["plan"]
    assert {"canary", "completion", "diff", "size"} <= set(_complete(bash_script, "hyperpod-dpd "))


def test_flags_and_their_choices_complete(bash_script):
    assert "--stack" in _complete(bash_script, "hyperpod-dpd plan --st")
    assert _complete(bash_script, "hyperpod-dpd plan --format ") == ["json", "text"]


def test_stack_completes_the_projects_stacks(bash_script):
    stacks = sorted(p.name.split(".")[1] for p in ROOT.glob("Pulumi.*.yaml"))
    assert _complete(bash_script, "hyperpod-dpd plan --stack ") == stacks
    assert _complete(bash_script, "hyperpod-dpd canary --stack ca") == ["canary"]


def test_zsh_gets_a_script_of_its_own(capsys):
    assert main(["completion", "zsh"]) == 0
    script = capsys.readouterr().out
    assert script.startswith("#compdef hyperpod-dpd") and "_hyperpod_dpd_stacks" in script
