"""How every `hyperpod-dpd` command (and the staging program) ends: the exit codes, defined once.

  0    done (a plan with advisories only, every verify check passed or skipped)
  1    a check, a policy or a transfer failed (the input was fine: rerun, or fix what it names)
  2    bad input: a flag, a stack file, a config key; the message names it, what is allowed, the fix
  3    an internal error (a bug of ours: rerun with --debug for the traceback)
  130  interrupted (Ctrl-C), as a shell reports a program stopped by SIGINT

`UsageProblem` is the error type that carries exit 2 out of any room to the command line, which
prints it as `error: <message>`; settings.ConfigError (a stack file's problems) is one.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class UsageProblem(Exception):
    """Bad input: the command line prints `error: <message>` and exits with EXIT_BAD_INPUT."""

    exit_code = EXIT_BAD_INPUT
