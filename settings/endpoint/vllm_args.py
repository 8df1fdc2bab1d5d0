"""The vLLM flags of each role (`prefill.args`, `decode.args`; EndpointConfig has no endpoint-wide
`args`): read as vLLM 0.19.0 reads them (core/vllm/vllm_flags.json, extracted from its source) and as
the operator merges them into the worker args (core/vllm/vllm_args.py), checked before anything runs.

Refused: flags the project sets (--model, --host, --port in any spelling; the flags it renders
from settings in a spelling other than vLLM's own, which the merge would not replace), short
forms and positional words (the merge reads `--flag [value]` pairs only), empty strings, flags
vLLM does not have, a value missing or given to a switch, a flag given twice. The numbers the flags give are
settings/endpoint/numbers.py's to parse and judge (as their typed keys are), and settings/endpoint/number_checks.py
judges them against the nodes (TP x PP x DP, the batch against the step budget).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from core.vllm.vllm_flags import canonical, vllm_aliases, vllm_flags, vllm_version
from settings.config.errors import full_key
from settings.endpoint.roles import ColocatedConfig

# Set by the project on every worker, never by a role: the operator mounts the checkpoint at the
# model path and probes and routes to the port (specs/endpoint.py worker_args).
OWNED = {
    "--model": "the model is the staged checkpoint the operator mounts (hyperpod-dpd:checkpoint)",
    "--host": "the worker listens on all addresses for the operator's probes and router",
    "--port": "the operator's probes, router and Service reach the worker on port 8000",
}
# Rendered from settings: a role may replace them, written as vLLM spells them (the merge matches
# a flag by its text, so '--tensor_parallel_size' would run beside the rendered one, unseen by the
# sizing and the policies). The setting to use instead, under the endpoint's key.
SETTING_FLAGS: dict[str, str | None] = {
    "--tensor-parallel-size": "<role>.tensorParallelSize",
    "--max-model-len": "maxModelLen",
    "--gpu-memory-utilization": "gpuMemoryUtilization",
    "--max-num-seqs": "<role>.maxNumSeqs",
    "--enforce-eager": None,  # the prefill role's default
    # endpoint.colocated's knobs, each named after its flag (ColocatedConfig.settings)
    **{"--" + name.replace("_", "-"): f"colocated.{field.alias}"
       for name, field in ColocatedConfig.model_fields.items()},
}  # fmt: skip
NUMBER = re.compile(r"^-\.?\d")  # a negative number is a value, not a flag (as in argparse)


@dataclass
class _Read:
    """A role's args as vLLM reads them: the last value of each flag (canonical name)."""

    values: dict[str, str | None]
    problems: list[tuple[str, str, str]]  # (token, allowed, fix)


def read_args(args: list[str], role: str, path: tuple[str, ...] = ("endpoint",)) -> _Read:
    aliases = vllm_aliases()
    read = _Read({}, [])
    key = full_key((*path, role, "args"))  # every fix below is an edit of this list
    pending: tuple[str, str] | None = None  # (flag as written, what it takes) awaiting a word
    last: tuple[str, str] | None = None  # the flag before, and what it takes

    def refuse(token: str, allowed: str, fix: str) -> None:
        read.problems.append((token, allowed, fix))

    for token in args:
        if token.startswith("-") and not NUMBER.match(token):
            if pending and pending[1] in ("one", "several"):
                refuse(pending[0], f"a value after {pending[0]}", _value_fix(pending[0], key))
            pending = last = None
        if token == "" or not token.strip():
            refuse(token, "a --flag or its value; an empty string is neither (vLLM reads it as "
                   "a positional word)", f"remove '{token}' from {key}")  # fmt: skip
            pending = None
        elif token.startswith("--") and any(c.isspace() for c in token.partition("=")[0]):
            first, *rest = token.split()
            refuse(token, "one flag or one value per list item (vLLM reads one item with spaces "
                   "as a positional word)", f"write {first}={rest[0]} instead of '{token}' in "
                   f"{key}" if len(rest) == 1 else f"split it: {_items([first, *rest])}")  # fmt: skip
        elif token.startswith("--"):
            name, eq, value = token.partition("=")
            kind = _flag_kind(token, role, path, refuse)
            if kind == "none" and eq:
                refuse(token, f"{name} alone: it is a switch and takes no value (vLLM: "
                       "'ignored explicit argument')", f"write {name} instead of '{token}' in "
                       f"{key} (or --no-{name[2:]} to turn it off)")  # fmt: skip
            if kind is not None and canonical(name) in read.values:
                refuse(token, f"{name} once: the operator's merge keeps one value per flag (core/"
                       "vllm/vllm_args.py merge_args), so the one before is dropped unseen",
                       f"give it once: remove {name} from {key}, then add back the one you "
                       "mean")  # fmt: skip
            if kind is not None:
                read.values[canonical(name)] = value if eq else None
            last = (name, kind or "one")
            pending = None if eq or kind == "none" else last
        elif token.startswith("-") and not NUMBER.match(token):
            long = aliases.get(token, "--optimization-level" if token.startswith("-O") else None)
            if long is None:
                _flag_kind(token, role, path, refuse)
            else:
                refuse(token, f"vLLM's long form {long} (the operator's merge of role args into "
                       "the worker args reads --flags only, and replaces a flag the project "
                       "sets only when spelled alike)", f"write {long} instead of '{token}' in "
                       f"{key}")  # fmt: skip
            last, pending = (token, "one"), (token, "one")
        elif pending is not None:
            if canonical(pending[0]) in read.values:
                read.values[canonical(pending[0])] = token
            pending = None
        else:
            refuse(token, *_positional(token, last, key))
    if pending and pending[1] in ("one", "several"):
        refuse(pending[0], f"a value after {pending[0]}", _value_fix(pending[0], key))
    return read


def _flag_kind(token: str, role: str, path: tuple[str, ...], refuse) -> str | None:
    """What the flag `token` (`--name` or `--name=value`) takes, or None (refused): owned by the
    project, respelled, or unknown."""
    flags = vllm_flags()
    name, eq, value = token.partition("=")
    flag = canonical(name)
    args = full_key((*path, role, "args"))
    if flag in OWNED:
        refuse(name, f"a flag the project does not set ({OWNED[flag]})",
               f"remove {name} from {args}")  # fmt: skip
        return None
    if flag in SETTING_FLAGS and name != flag:
        setting = SETTING_FLAGS[flag]
        key = full_key((*path, *setting.replace("<role>", role).split("."))) if setting else ""
        refuse(name, f"{flag}, as vLLM spells it: the project sets {flag} itself"
               f"{' from ' + key if key else ''}, and the operator's merge replaces it only when "
               "spelled alike", f"write {flag}{eq}{value} instead of '{token}' in {args}"
               f"{', or set ' + key if key else ''}")  # fmt: skip
        return None
    if flag not in flags:
        close = difflib.get_close_matches(flag, list(flags), n=1, cutoff=0.75)
        fix = (
            f"did you mean {close[0]}? write {close[0]}{eq}{value} instead of '{token}' in {args}"
            if close
            else f"remove {name} from {args} (or correct it)"
        )
        refuse(name, f"a flag of vLLM {vllm_version()} (the worker images' vLLM; see `vllm serve "
               "--help`)", fix)  # fmt: skip
        return None
    return "one" if "." in name else flags[flag]


def _positional(token: str, last: tuple[str, str] | None, key: str) -> tuple[str, str]:
    if last is not None and last[1] == "none":
        return (f"no word after {last[0]}: it is a switch and takes no value",
                f"remove '{token}' from {key} (or write --no-{last[0][2:]} to turn it off)")  # fmt: skip
    if last is not None and last[1] == "several":
        return (f"one value after {last[0]}: the operator's merge of role args pairs each flag "
                "with the one word after it", f"keep one value for {last[0]}: remove "
                f"'{token}' from {key}")  # fmt: skip
    return ("a --flag before each value: vLLM takes no positional word here (the project gives "
            "the model with --model)", f"remove '{token}' from {key}, or put its --flag before "
            "it")  # fmt: skip


def _value_fix(flag: str, key: str) -> str:
    return f"remove {flag} from {key}, or give it a value ({flag} VALUE or {flag}=VALUE)"


def _items(parts: list[str]) -> str:
    return "[" + ", ".join(f'"{p}"' for p in parts) + "]"
