"""The vLLM flags of each role (`prefill.args`, `decode.args`; EndpointConfig has no endpoint-wide
`args`): read as vLLM 0.19.0 reads them (core/vllm_flags.json, extracted from its source) and as
the operator merges them into the worker args (core/vllm_args.py), checked before anything runs.

Refused: flags the project sets (--model, --host, --port in any spelling; the flags it renders
from settings in a spelling other than vLLM's own, which the merge would not replace), short
forms and positional words (the merge reads `--flag [value]` pairs only), empty strings, flags
vLLM does not have, a value missing or given to a switch, TP x PP x DP beyond one node's GPUs and
a --max-num-seqs of 0 or above the step budget --max-num-batched-tokens. A step budget larger
than the GPU holds is settings/endpoint_sizing.py's (check_step_budget).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from core.gpu_types import gpu_spec
from core.vllm_flags import canonical, vllm_aliases, vllm_flags, vllm_version
from settings.cluster import InstanceGroups
from settings.endpoint import ColocatedConfig
from settings.endpoints import EndpointEntry, placement
from settings.errors import ConfigProblem, full_key

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
PARALLEL = ("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size")
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


# --- the numbers the worker runs with -------------------------------------------------------


def arg_number(values: dict[str, str], flag: str, kind: type = int) -> int | float | None:
    """The number `flag` gives among read args' `values` (None: not given, or not a number:
    check_role_args reports that)."""
    text = values.get(flag)
    try:
        return kind(text) if text is not None else None
    except ValueError:
        return None


def _whole(read: _Read, flag: str) -> int | None:
    return arg_number(read.values, flag)


def check_role_args(
    entry: EndpointEntry, groups: InstanceGroups, alone: bool
) -> list[ConfigProblem]:
    """Every role's args read as vLLM reads them; then each pool's parallel sizes against its
    node's GPUs and its batch against its step budget."""
    e = entry.config
    problems = []
    reads = {}
    for role in ("prefill", "decode"):
        key = entry.config_key(role, "args")
        read = reads[role] = read_args(getattr(e, role).args, role, entry.path)
        problems += [
            ConfigProblem(key, token, allowed, fix) for token, allowed, fix in read.problems
        ]
        for flag in (*PARALLEL, "--max-num-seqs"):
            text = read.values.get(flag)
            if text is not None and (_whole(read, flag) or 0) < 1:
                problems.append(ConfigProblem(
                    key, f"{flag} {text}", f"{flag} a whole number of at least 1",
                    f"set {flag} in {key} to 1" + (f", or remove it and set "
                    f"{entry.config_key(role, 'maxNumSeqs')}" if flag == "--max-num-seqs" else ""),
                ))  # fmt: skip
    if problems:
        return problems
    for pool in entry.pools():
        role = "decode" if pool == "colocated" else pool
        problems += _check_parallel(entry, pool, reads[role], groups, alone)
        problems += _check_batch(entry, pool, reads[role])
    return problems


def _check_parallel(
    entry: EndpointEntry, pool: str, read: _Read, groups: InstanceGroups, alone: bool
) -> list[ConfigProblem]:
    """TP x PP x DP GPUs per worker (vLLM's world size); a worker owns one node."""
    e = entry.config
    role = "decode" if pool == "colocated" else pool
    given = [f for f in PARALLEL if f in read.values]
    if not given:
        return []  # the settings' own TP: the sizing and the TP policy judge it
    tp = _whole(read, PARALLEL[0]) or e.role_tp(role)
    pp, dp = _whole(read, PARALLEL[1]) or 1, _whole(read, PARALLEL[2]) or 1
    types = {groups[n].instance_type for n in placement(entry, pool, groups, alone)}
    known = sorted((spec.gpu_count, t) for t in types if (spec := gpu_spec(t)) is not None)
    if not known or tp * pp * dp <= known[0][0]:
        return []
    gpus, itype = known[0]
    key = entry.config_key(role, "args")
    return [ConfigProblem(
        key, " ".join(f"{f} {read.values[f]}" for f in given),
        f"TP x PP x DP ({tp} x {pp} x {dp} = {tp * pp * dp}) at most the {gpus} GPUs of one "
        f"{itype}: each {pool} worker is one pod on one node",
        _parallel_fix(given, {PARALLEL[0]: tp, PARALLEL[1]: pp, PARALLEL[2]: dp}, gpus, key),
    )]  # fmt: skip


def _parallel_fix(given: list[str], sizes: dict[str, int], gpus: int, key: str) -> str:
    """Lower the last parallel size given to what fits beside the others, when one does."""
    flag = given[-1]
    others = math.prod(v for f, v in sizes.items() if f != flag)
    fits = gpus // others
    more = "(more workers: raise replicas instead)"
    if fits >= 1:
        return f"set {flag} in {key} to {fits} so that TP x PP x DP is at most {gpus} {more}"
    return f"lower {', '.join(given)} in {key} so that their product is {gpus} or less {more}"


def _check_batch(entry: EndpointEntry, pool: str, read: _Read) -> list[ConfigProblem]:
    """vLLM refuses a batch (--max-num-seqs) larger than its step budget."""
    e = entry.config
    role = "decode" if pool == "colocated" else pool
    seqs = _whole(read, "--max-num-seqs") or getattr(e, role).max_num_seqs
    budget = _whole(read, "--max-num-batched-tokens")
    where = "--max-num-batched-tokens"
    if pool == "colocated" and e.colocated.max_num_batched_tokens is not None:
        budget, where = (
            e.colocated.max_num_batched_tokens,
            entry.config_key("colocated", "maxNumBatchedTokens"),
        )
    from_args = "--max-num-seqs" in read.values or where == "--max-num-batched-tokens"
    if budget is None or seqs <= budget or not from_args:
        return []  # equal or below; typed values on both sides: check_colocated's
    key = entry.config_key(role, "args")
    return [ConfigProblem(
        key, f"--max-num-seqs {seqs}",
        f"--max-num-seqs at most the step budget {where} ({budget}): vLLM refuses a batch "
        "larger than the tokens of one step",
        f"set --max-num-seqs in {key} to {budget}, or raise {where}"
        if "--max-num-seqs" in read.values
        else f"set {where} in {key} to {seqs}, or lower {entry.config_key(role, 'maxNumSeqs')}",
    )]  # fmt: skip
