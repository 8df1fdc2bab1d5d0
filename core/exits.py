"""How every `hyperpod-dpd` command (and the staging program) ends: the exit codes, defined once.

  0    done (a plan with advisories only, every verify check passed or skipped)
  1    a check, a policy or a transfer failed (the input was fine: rerun, or fix what it names)
  2    bad input: a flag, a stack file, a config key; the message names it, what is allowed, the fix
  3    an internal error (a bug of ours: rerun with --debug for the traceback)
  4    not yet: `hyperpod-dpd canary` holds (too few requests to judge); ask again later
  130  interrupted (Ctrl-C), as a shell reports a program stopped by SIGINT
  141  the reader of the output went away (`| head`), as a shell reports a program SIGPIPE ends;
       quietly: that is the reader's choice, not an error

`UsageProblem` is the error type that carries exit 2 out of any room to the command line, which
prints it as `error: <message>`; settings.ConfigError (a stack file's problems) is one.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
EXIT_HOLD = 4


class UsageProblem(Exception):
    """Bad input: the command line prints `error: <message>` and exits with EXIT_BAD_INPUT."""

    exit_code = EXIT_BAD_INPUT


# Errors of the user's environment, not of our code: AWS credentials and profiles (botocore) the
# commands meet when they first ask AWS. Named here by class so nothing below imports botocore.
_AWS_SETUP_ERRORS = {
    "ProfileNotFound",
    "NoCredentialsError",
    "PartialCredentialsError",
    "NoRegionError",
    "InvalidConfigError",
    "ConfigParseError",
    "CredentialRetrievalError",
}


def environment_problem(exc: BaseException) -> str | None:
    """A bad-input message for an error of the user's AWS setup (None: not one)."""
    kind = type(exc)
    if kind.__module__.startswith("botocore") and kind.__name__ in _AWS_SETUP_ERRORS:
        import os

        profile = os.environ.get("AWS_PROFILE")
        where = f" (AWS_PROFILE={profile!r})" if profile else ""
        return (
            f"AWS credentials{where}: {exc}. Fix: set AWS_PROFILE to a profile of your AWS config "
            "(`aws configure list-profiles`) or unset it, and check `aws sts get-caller-identity`"
        )
    return None


def tolerant_streams() -> None:
    """Let stdout and stderr print any text: a value the user gave in bytes that are not UTF-8
    (Python's surrogate escapes) is shown escaped, never a UnicodeEncodeError."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def unhandled(exc: BaseException, debug: bool) -> int:
    """What a command line does with an error no room handled: the user's AWS setup is bad
    input (EXIT_BAD_INPUT, with the fix); anything else is ours (EXIT_INTERNAL; the traceback
    with --debug). Prints the message on stderr and returns the exit code."""
    import sys

    problem = environment_problem(exc)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if debug:
        import traceback

        traceback.print_exception(exc)
    print(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug)", file=sys.stderr)
    return EXIT_INTERNAL
