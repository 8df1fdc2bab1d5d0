"""Every command's `--help` in one shape, as the tools our users know print it (git, kubectl,
the AWS CLI): what the command does, then examples to paste, then what each exit code means.

`described(parser, examples, exit_codes)` sets a parser's epilog and keeps its text as written
(examples are command lines; a paraphrase of them would not paste). The exit codes are the
command's own (core/exits.py defines them once); the codes every command shares (3: an internal
error, 130: interrupted) are added here. Standard library only: the staging Job ships this module
with checkpoint/program.py.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

from core.exits import EXIT_INTERNAL, EXIT_INTERRUPTED

SHARED_EXIT_CODES = {
    EXIT_INTERNAL: "an internal error (a bug of ours: rerun with --debug for the traceback)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C): what the command had only begun is undone",
}


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Description and epilog as written (paragraphs, examples one per line)."""


class FormatterWithDefaults(argparse.RawDescriptionHelpFormatter,
                            argparse.ArgumentDefaultsHelpFormatter):  # fmt: skip
    """The same, and each flag's default after its help."""


def epilog(examples: Iterable[str], exit_codes: Mapping[int, str]) -> str:
    codes = {**exit_codes, **SHARED_EXIT_CODES}
    lines = ["examples:", *(f"  {example}" for example in examples), "", "exit codes:"]
    lines += [f"  {code:<4} {meaning}" for code, meaning in sorted(codes.items())]
    return "\n".join(lines)


def described(
    parser: argparse.ArgumentParser, examples: Iterable[str], exit_codes: Mapping[int, str]
) -> argparse.ArgumentParser:
    """`parser` with the examples and exit codes as its epilog, its text kept as written."""
    parser.epilog = epilog(examples, exit_codes)
    if parser.formatter_class is argparse.ArgumentDefaultsHelpFormatter:
        parser.formatter_class = FormatterWithDefaults
    elif parser.formatter_class is argparse.HelpFormatter:
        parser.formatter_class = Formatter
    return parser
