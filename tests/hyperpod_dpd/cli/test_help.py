"""Every command's `--help`, as the tools our users know print it: what it does, examples that
run, what each exit code means; and `--version`. Walked over the command line's own parsers
(hyperpod_dpd/cli COMMANDS), so a command added later is held to it without editing this file."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from core import cli_inputs as inputs
from hyperpod_dpd.cli import COMMANDS, main, parser
from tests.conftest import ROOT

SHELL = {">", ">>", "|", "&&", "2>", "&"}  # where an example's command line ends


def _commands(command: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) of every command and subcommand under `command`."""
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


ROOT_PARSER = parser()
ALL = {(): ROOT_PARSER, **dict(_commands(ROOT_PARSER))}


def test_every_command_module_registers_a_command_walked_here():
    assert {c.__name__.rsplit(".", 1)[1].replace("_", "-") for c in COMMANDS} == {
        path[0] for path in ALL if path
    }


def _sections(help_text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in help_text.splitlines():
        if re.match(r"^[a-z][a-z ]*:$", line):
            current = line[:-1]
            sections[current] = []
        elif current and line.startswith("  "):
            sections[current].append(line.strip())
    return sections


@pytest.fixture(scope="module")
def lenient_parser():
    """The command line with input paths taken as given: an example names the user's files
    (a results directory, a trace) that need not exist here; everything else is parsed as is."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inputs, "input_path", Path)
        patch.setattr(inputs, "input_file", Path)
        yield parser()


@pytest.mark.parametrize("path", sorted(ALL), ids=lambda path: " ".join(path) or "hyperpod-dpd")
def test_help_says_what_the_command_does_with_examples_and_exit_codes(path, lenient_parser):
    command = ALL[path]
    help_text = command.format_help()
    assert command.description and len(command.description.split()) >= 8, help_text
    sections = _sections(help_text)
    examples = sections.get("examples")
    assert examples, f"{' '.join(path)} --help shows no example:\n{help_text}"
    for example in examples:
        words = shlex.split(example)
        assert words[: len(path) + 1] == ["hyperpod-dpd", *path], example
        argv = []
        for word in words[1:]:
            if word in SHELL:
                break
            argv.append(word)
        # Each example is a command line the parser takes as it is (flags, choices, types).
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                lenient_parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{example!r} does not parse: {err.getvalue()}")
    codes = {int(line.split()[0]): line for line in sections.get("exit codes", [])}
    assert {0, 2, 3, 130} <= set(codes), help_text


def test_every_flag_says_what_it_is_for():
    bare = [
        f"{' '.join(path)} {action.option_strings[0]}"
        for path, command in ALL.items()
        for action in command._actions
        if action.option_strings and not action.help
    ]
    assert not bare, bare


def test_version_prints_the_projects_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    version = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert (exited.value.code, capsys.readouterr().out) == (0, f"hyperpod-dpd {version}\n")


def test_the_console_script_has_version_and_help():
    script = [sys.executable, "-m", "hyperpod_dpd.cli"]
    out = subprocess.run([*script, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("hyperpod-dpd ")
    out = subprocess.run([*script, "--help"], capture_output=True, text=True, check=True)
    assert "examples:" in out.stdout and "exit codes:" in out.stdout
