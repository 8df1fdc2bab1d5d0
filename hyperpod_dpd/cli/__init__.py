"""`hyperpod-dpd`: the project's command line.

This package parses arguments and dispatches, nothing else: one module per command, each with
`register(subparsers)` (its parser; the parser's defaults set `handler`) and handlers
`(args, project_dir) -> exit code` that call into the command's room (hyperpod_dpd/plan,
diff, verify, benchmark, advise, canary, rollout, demo, preflight, fetch, size, policy, pulumi_yaml)
or into checkpoint/; `completion` prints the shell completion script of these parsers (shtab).
A command module imports only the standard library at the top: what a handler needs (Pulumi
SDKs, boto3, kubernetes, pydantic models) is imported when it runs, so `hyperpod-dpd --help`
and every `<command> --help` start without loading them.

Exit codes: core/exits.py (0 fine, 1 a check or policy failed, 2 bad input naming the key or
flag, 3 an internal error: rerun with --debug for the traceback, 130 interrupted, 141 the reader
of the output went away, as with `| head`).
"""

from __future__ import annotations

import argparse
import difflib
import gc
import os
import signal
import sys
import threading
from pathlib import Path

from core.cli_help import epilog
from core.colour import Palette
from core.exits import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    UsageProblem,
    tolerant_streams,
    unhandled,
)
from core.pulumi_commands import naming_stack
from hyperpod_dpd.cli import (
    advise,
    benchmark,
    canary,
    checkpoint,
    ci,
    completion,
    demo,
    diff,
    fetch,
    plan,
    policy_config,
    policy_pack,
    preflight,
    pulumi_yaml,
    rollout,
    size,
    verify,
)

# In the order `--help` lists them.
COMMANDS = (
    plan,
    size,
    preflight,
    fetch,
    policy_config,
    policy_pack,
    ci,
    checkpoint,
    diff,
    verify,
    benchmark,
    canary,
    rollout,
    advise,
    pulumi_yaml,
    demo,
    completion,
)


def find_project_dir(start: Path) -> Path:
    """The nearest directory holding Pulumi.yaml, as the Pulumi CLI finds it."""
    for directory in (start, *start.parents):
        if (directory / "Pulumi.yaml").exists():
            return directory
    return Path(__file__).resolve().parents[2]  # the checkout this package runs from


def version() -> str:
    """The installed distribution's version (pyproject.toml), else the checkout's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("hyperpod-dpd")
    except PackageNotFoundError:  # run from a checkout that was never installed
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text())["project"]["version"]


class _Version(argparse.Action):
    """`--version`: read only when asked (the metadata lookup costs start-up time)."""

    def __init__(
        self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None
    ):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"hyperpod-dpd {version()}")
        parser.exit()


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="hyperpod-dpd",
        description="Plan, check, deploy-verify, benchmark and canary DPD (disaggregated prefill "
        "and decode) LLM serving on SageMaker HyperPod; `hyperpod-dpd <command> --help` for each.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=epilog(
            ["hyperpod-dpd plan --stack dev", "hyperpod-dpd size --tp 4",
             "hyperpod-dpd demo", "hyperpod-dpd completion bash"],
            {0: "done", 1: "a check or a policy failed (the input was fine)",
             2: "bad input: the message names the key or flag, what is allowed and the fix",
             4: "canary: hold (too few requests yet)",
             141: "the reader of the output went away (`| head`)"},
        ),
    )  # fmt: skip
    root.add_argument("--version", action=_Version, help="print the version and exit")
    root.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    sub = root.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
    root.set_defaults(command_line=root)  # for `completion`, which prints all of it
    return root


def unrecognized(root: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]):
    """Refuse flags the command does not take as the command's own usage error (not the top
    level's), with the closest flag it does take: `size --tps 8` -> did you mean --tp?"""
    command = root
    while True:
        subs = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = subs and getattr(args, subs[0].dest or "", None)
        if not chosen or chosen not in subs[0].choices:
            break
        command = subs[0].choices[chosen]
    flags = [f for a in command._actions for f in a.option_strings if f.startswith("--")]
    hints = []
    for word in extra:
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"{word.split('=', 1)[0]}: did you mean {close[0]}?")
    command.error(f"unrecognized arguments: {' '.join(extra)}" + "".join(f"\n  {h}" for h in hints))


# How long after a Ctrl-C that Python dropped it is sent again (_interrupts_sent_again).
INTERRUPT_AGAIN_SECONDS = 0.05


def main(argv: list[str] | None = None) -> int:
    tolerant_streams()
    root = parser()
    args, extra = root.parse_known_args(argv)
    if extra:
        unrecognized(root, args, extra)  # exits 2, as argparse does
    project_dir = getattr(args, "project_dir", None) or find_project_dir(Path.cwd())
    hook, resent = sys.unraisablehook, []
    sys.unraisablehook = _interrupts_sent_again(hook, resent)
    try:
        code = args.handler(args, project_dir)
        for again in resent:  # a Ctrl-C dropped at the very end: it stops the command here
            again.join()
        return code
    except KeyboardInterrupt as stopped:
        _freed_quietly(stopped)
        print("interrupted", file=sys.stderr)  # Ctrl-C is the user's, not a traceback
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _reader_left()
    except UsageProblem as exc:  # a stack file's ConfigError among them
        message = str(exc)
        if isinstance(getattr(args, "stack", None), str):  # its Pulumi commands name the stack
            message = naming_stack(message, args.stack)
        print(f"{Palette(sys.stderr).red('error:')} {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        return unhandled(exc, args.debug)
    finally:
        sys.unraisablehook = hook


def _interrupts_sent_again(hook, resent: list[threading.Timer]):
    """`hook`, but for a Ctrl-C that Python could not raise: one whose handler ran inside a
    destructor or a weakref callback (the collector freeing the plan's objects) ends as a
    report ("Exception ignored in ... KeyboardInterrupt") and the command ran on, as if never
    interrupted. It is sent again to the main thread, a moment later (raised at once, it would
    be raised in this hook, and dropped the same way), as a signal: one that also ends a wait
    the command is in."""

    def unraisable(report) -> None:
        if report.exc_type is not None and issubclass(report.exc_type, KeyboardInterrupt):
            main_thread = threading.main_thread().ident
            again = threading.Timer(INTERRUPT_AGAIN_SECONDS, signal.pthread_kill,
                                    (main_thread, signal.SIGINT))  # fmt: skip
            again.daemon = True
            again.start()
            resent.append(again)
        else:
            hook(report)

    return unraisable


def _freed_quietly(stopped: KeyboardInterrupt) -> None:
    """Free what the interrupt left half-built, saying nothing of it. Ctrl-C can land inside a
    constructor (an asyncio event loop's, as the plan starts its program): the object is freed
    with the frames of the interrupted code, and its destructor fails on the attributes it never
    got ("Exception ignored in ... BaseEventLoop.__del__", a traceback after "interrupted").
    That is noise about our own stop, not news for the user: the destructors run here, now,
    with such reports dropped, and the reporting is as it was afterwards."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        stopped.__traceback__ = None  # the interrupted frames, and what only they held
        gc.collect()  # what they held in a cycle
    except KeyboardInterrupt:  # Ctrl-C again: the command is stopping already
        pass
    finally:
        sys.unraisablehook = hook


def entry() -> None:
    """The console script: `main`, then exit without tearing the interpreter down. A plan leaves
    a heap of SDK classes and objects whose teardown costs a second and more, and nothing is
    left to do by then (output flushed, files closed, temporary directories removed)."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = _reader_left()
    os._exit(code)


def _reader_left() -> int:
    """The reader of standard output went away (`hyperpod-dpd plan | head`): its choice, not an
    error. Quiet, as a Unix tool killed by SIGPIPE is, with its exit code; what is still buffered
    goes nowhere instead of raising again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    entry()
