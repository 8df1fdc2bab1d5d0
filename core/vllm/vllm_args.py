"""vLLM command-line flags, and the operator's rule for merging a role's args into the worker's.

The operator appends `pdSpec.<role>.args` after `worker.args`: a flag already present in the
worker args is replaced by the role's value, a missing one is appended. Modelling the rule here
lets checks see each role's *effective* flags (what vLLM actually runs with).
"""

from __future__ import annotations

VLLM_UTILIZATION = 0.9  # vLLM's default --gpu-memory-utilization
# --max-num-seqs assumed where a manifest carries none (the project always renders it): vLLM's
# long-standing default (newer versions pick one per GPU and entry point).
VLLM_MAX_NUM_SEQS = 256
Flag = tuple[str, str | None]  # ("--max-num-seqs", "16") or ("--enforce-eager", None)


def parse_flags(args: list[str] | tuple[str, ...]) -> list[Flag]:
    """Split args into (flag, value) pairs; '--x=1' and '--x 1' both give ('--x', '1').

    A token that does not start with '--' is the value of the flag before it; a flag followed
    by another flag (e.g. '--enforce-eager') has no value.
    """
    flags: list[Flag] = []
    for token in args:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            flags.append((name, value if eq else None))
        elif flags and flags[-1][1] is None:
            flags[-1] = (flags[-1][0], token)
        else:
            raise ValueError(f"argument {token!r} does not follow a --flag")
    return flags


def render_flags(flags: list[Flag]) -> list[str]:
    out: list[str] = []
    for name, value in flags:
        out.append(name)
        if value is not None:
            out.append(value)
    return out


def merge_args(
    base: list[str] | tuple[str, ...], override: list[str] | tuple[str, ...]
) -> list[str]:
    """The operator's rule: override's flags replace base's in place, new ones are appended."""
    merged = parse_flags(base)
    positions = {name: i for i, (name, _) in enumerate(merged)}
    for name, value in parse_flags(override):
        if name in positions:
            merged[positions[name]] = (name, value)
        else:
            positions[name] = len(merged)
            merged.append((name, value))
    return render_flags(merged)


def flag_value(args: list[str] | tuple[str, ...], name: str) -> str | None:
    """The value of `name` in `args` (last one wins, as in argparse); None when absent."""
    value = None
    for flag, v in parse_flags(args):
        if flag == name:
            value = v if v is not None else ""
    return value
