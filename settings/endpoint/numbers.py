"""One set of effective numbers per endpoint and pool: what each pool's vLLM runs with, and the
config key each number came from. The one place the ways of giving a number are reconciled:

- its typed key (endpoint.maxModelLen, endpoint.decode.tensorParallelSize, ...);
- a role's args (`--max-model-len 8192` or `--max-model-len=8192` in endpoint.decode.args), which
  the operator merges over the worker args, the last one winning (core/vllm/vllm_args.py); a colocated
  worker runs the decoder's args, with endpoint.colocated's knobs merged after them;
- for the PD buffer, environmentVariables.PD_BUFFER_SIZE, over pdBufferSize.

An override is parsed as vLLM reads its flag (int() or float()) or as pdBufferSize is (the same
byte-size parser), judged by its typed key's own field (the same bounds), and refused naming
where it was given. The checks, the specs (the manifest's PD_BUFFER_SIZE, the gate's typed
facts), the sizing, the summary, plan.json, `diff` and `advise` read this set; only the
CrossGuard pack, which sees nothing but the manifest, reads the numbers back from it
(policies/rules/views.py), and tests/settings/endpoint/test_numbers.py holds the two readings equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, Literal, Protocol

from annotated_types import Ge, Gt, Le, Lt
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from core.problems import ConfigProblem
from core.sizing.catalog import GIB
from core.vllm.worker_facts import NUMBER_FLAGS, RoleNumbers, WorkerFacts
from core.vocabulary import DPD_ROLES
from settings.config.errors import full_key, set_fix
from settings.endpoint.model import EndpointConfig
from settings.endpoint.roles import ColocatedConfig, RoleConfig
from settings.endpoint.vllm_args import read_args


class Endpoint(Protocol):
    """What the reconciliation reads of an endpoint: settings/endpoint/entries.py's EndpointEntry
    (which holds its numbers, so it is not imported here)."""

    @property
    def config(self) -> EndpointConfig: ...

    @property
    def path(self) -> tuple[str, ...]: ...

    def config_key(self, *rest: str) -> str: ...

    def pools(self) -> tuple[str, ...]: ...


Source = Literal["key", "environment", "args", "vllm"]  # "vllm": set nowhere, vLLM's default


@dataclass(frozen=True)
class Given:
    """One effective number and where it came from."""

    value: Any  # an int, or a float (gpuMemoryUtilization)
    key: str  # the full config key it came from: for a flag, the role's args
    flag: str | None = None  # the vLLM flag, when it comes (or would come) from a role's args
    source: Source = "key"

    @property
    def where(self) -> str:
        """Where it is set, as a message names it: the key, or '--flag in <args key>'."""
        return f"{self.flag} in {self.key}" if self.flag else self.key

    @property
    def overridden(self) -> bool:
        """Given through environmentVariables or a role's args, over its typed key."""
        return self.source in ("environment", "args")

    @property
    def shown(self) -> Any:
        """The value as a ConfigProblem shows it: a flag's with the flag."""
        return f"{self.flag} {self.value}" if self.flag else self.value

    def set_to(self, value: Any) -> str:
        """The fix that gives it `value` where it is set."""
        return (
            f"set {self.flag} in {self.key} to {value}" if self.flag else set_fix(self.key, value)
        )


@dataclass(frozen=True)
class PoolNumbers:
    """What one pool's workers run with: prefill, decode, or a colocated endpoint's one pool."""

    pool: str
    tensor_parallel_size: Given
    pipeline_parallel_size: Given
    data_parallel_size: Given
    gpu_memory_utilization: Given
    max_model_len: Given
    max_num_seqs: Given
    max_num_batched_tokens: Given | None  # None: vLLM's own step budget

    def given(self) -> dict[str, Given]:
        """The numbers set somewhere (a parallel size only where a role's args give it)."""
        return {
            f.name: g
            for f in fields(self)
            if isinstance(g := getattr(self, f.name), Given) and g.source != "vllm"
        }

    def role_numbers(self) -> RoleNumbers:
        return RoleNumbers(**{name: getattr(self, name).value for name in NUMBER_FLAGS})


@dataclass(frozen=True)
class EffectiveNumbers:
    """An endpoint's numbers; `problems` are the overrides refused (each such number keeps its
    typed key's value here), and the args that vLLM could not read at all."""

    pd_buffer: Given
    pools: Mapping[str, PoolNumbers]  # by pool: prefill and decode, or colocated
    problems: tuple[ConfigProblem, ...] = ()
    path: tuple[str, ...] = field(default=("endpoint",), compare=False)

    def of_role(self, role: str) -> PoolNumbers:
        """The numbers `role` (prefill, decode) runs with: a colocated endpoint's one pool."""
        return self.pools.get(role) or self.pools["colocated"]

    def facts(self) -> WorkerFacts:
        """What the gate's rules read (core/vllm/worker_facts.py), with where a fix sets each."""
        keys = {"pd_buffer_bytes": self.pd_buffer.where}
        for role in DPD_ROLES:
            pool = self.of_role(role)
            for name in NUMBER_FLAGS:
                keys[f"{role}.{name}"] = getattr(pool, name).where
            if pool.pool != "colocated" and pool.tensor_parallel_size.source == "key":
                # A DPD role's own TP is what a fix sets: one role changes, not both.
                keys[f"{role}.tensor_parallel_size"] = full_key(
                    (*self.path, role, "tensorParallelSize")
                )
        roles = {role: self.of_role(role).role_numbers() for role in DPD_ROLES}
        return WorkerFacts(self.pd_buffer.value, roles, keys)

    def to_json(self) -> dict[str, Any]:
        """plan.json's form: each number's value and where it came from, by typed key name."""

        def shown(g: Given) -> dict[str, Any]:
            return {"value": g.value, "from": g.where}

        out: dict[str, Any] = {"pdBufferSize": shown(self.pd_buffer)}
        for pool, numbers in self.pools.items():
            out[pool] = {_camel(n): shown(g) for n, g in numbers.given().items()}
        return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# --- parsing and judging an override -------------------------------------------------------

_STRICT = ConfigDict(strict=True, allow_inf_nan=False)


@dataclass(frozen=True)
class _Flag:
    """A number a role's args can give: its flag, how vLLM parses the flag's text, and the
    field whose bounds judge it (its typed key's, where it has one)."""

    flag: str
    kind: type
    field: FieldInfo

    def adapter(self) -> TypeAdapter:
        return TypeAdapter(Annotated[self.kind, *self.field.metadata], config=_STRICT)

    def words(self) -> str:
        """'a whole number of at least 1', 'a number greater than 0 and at most 1'."""
        bounds = []
        for m in self.field.metadata:
            if isinstance(m, Ge):
                bounds.append(f"of at least {m.ge:g}")
            elif isinstance(m, Gt):
                bounds.append(f"greater than {m.gt:g}")
            elif isinstance(m, Le):
                bounds.append(f"at most {m.le:g}")
            elif isinstance(m, Lt):
                bounds.append(f"less than {m.lt:g}")
        kind = "a whole number" if self.kind is int else "a number"
        return " ".join([kind, " and ".join(bounds)]).strip()


_FLAGS = {
    "tensor_parallel_size": _Flag(
        NUMBER_FLAGS["tensor_parallel_size"], int, RoleConfig.model_fields["tensor_parallel_size"]
    ),
    "pipeline_parallel_size": _Flag("--pipeline-parallel-size", int, Field(ge=1)),
    "data_parallel_size": _Flag("--data-parallel-size", int, Field(ge=1)),
    "gpu_memory_utilization": _Flag(
        NUMBER_FLAGS["gpu_memory_utilization"],
        float,
        EndpointConfig.model_fields["gpu_memory_utilization"],
    ),
    "max_model_len": _Flag(
        NUMBER_FLAGS["max_model_len"], int, EndpointConfig.model_fields["max_model_len"]
    ),
    "max_num_seqs": _Flag(
        NUMBER_FLAGS["max_num_seqs"], int, RoleConfig.model_fields["max_num_seqs"]
    ),
    "max_num_batched_tokens": _Flag(
        "--max-num-batched-tokens", int, ColocatedConfig.model_fields["max_num_batched_tokens"]
    ),
}
_ADAPTERS = {name: f.adapter() for name, f in _FLAGS.items()}
_PD_BUFFER = EndpointConfig.model_fields["pd_buffer_size"]
_BYTES = TypeAdapter(Annotated[int, *_PD_BUFFER.metadata], config=_STRICT)


def _number(name: str, text: str) -> Any | None:
    """The number `text` gives for `name` as vLLM parses it, if its typed key's field takes it."""
    try:
        return _ADAPTERS[name].validate_python(_FLAGS[name].kind(text))
    except ValueError:  # not a number to int()/float(), or out of the field's bounds
        return None


# --- the reconciliation ----------------------------------------------------------------------


def effective_numbers(entry: Endpoint) -> EffectiveNumbers:
    """The numbers of `entry`'s pools, from its typed keys, its roles' args and its
    environmentVariables; every override refused is in `problems`."""
    e = entry.config
    pd_buffer, problems = _pd_buffer(entry)
    overrides: dict[str, dict[str, Given]] = {}
    for role in DPD_ROLES:  # a colocated endpoint's prefill args are read too, and refused alike
        key = entry.config_key(role, "args")
        read = read_args(getattr(e, role).args, role, entry.path)
        problems += [
            ConfigProblem(key, token, allowed, fix) for token, allowed, fix in read.problems
        ]
        overrides[role] = {}
        for name, f in _FLAGS.items():
            text = read.values.get(f.flag)
            if text is None:
                continue
            value = _number(name, text)
            if value is None:
                problems.append(_refused(entry, role, name, text))
            else:
                overrides[role][name] = Given(value, key, f.flag, "args")
    pools = {
        pool: _pool(entry, pool, overrides["decode" if pool == "colocated" else pool])
        for pool in entry.pools()
    }
    return EffectiveNumbers(pd_buffer, pools, tuple(problems), entry.path)


def _pool(entry: Endpoint, pool: str, overrides: dict[str, Given]) -> PoolNumbers:
    """The typed keys' numbers of `pool`, the role's args over them (the operator's merge), and
    a colocated pool's step budget from endpoint.colocated over both (merged last)."""
    e = entry.config
    role = "decode" if pool == "colocated" else pool
    section = getattr(e, role)
    args = entry.config_key(role, "args")
    own_tp = section.tensor_parallel_size
    numbers: dict[str, Given | None] = {
        "tensor_parallel_size": Given(own_tp, entry.config_key(role, "tensorParallelSize"))
        if own_tp is not None
        else Given(e.tensor_parallel_size, entry.config_key("tensorParallelSize")),
        "pipeline_parallel_size": Given(1, args, _FLAGS["pipeline_parallel_size"].flag, "vllm"),
        "data_parallel_size": Given(1, args, _FLAGS["data_parallel_size"].flag, "vllm"),
        "gpu_memory_utilization": Given(
            e.gpu_memory_utilization, entry.config_key("gpuMemoryUtilization")
        ),
        "max_model_len": Given(e.max_model_len, entry.config_key("maxModelLen")),
        "max_num_seqs": Given(section.max_num_seqs, entry.config_key(role, "maxNumSeqs")),
        "max_num_batched_tokens": None,
        **overrides,
    }
    budget = e.colocated.max_num_batched_tokens
    if pool == "colocated" and budget is not None:
        key = entry.config_key("colocated", "maxNumBatchedTokens")
        numbers["max_num_batched_tokens"] = Given(budget, key)
    return PoolNumbers(pool, **numbers)


def _refused(entry: Endpoint, role: str, name: str, text: str) -> ConfigProblem:
    """An override in `role`'s args that its typed key would refuse."""
    f = _FLAGS[name]
    key = entry.config_key(role, "args")
    fallback = getattr(_pool(entry, role, {}), name)  # what the typed keys give the role
    allowed = f"{f.flag} {f.words()}"
    if fallback is None:  # no typed budget: vLLM's own
        return ConfigProblem(
            key, f"{f.flag} {text}", allowed, f"remove {f.flag} from {key} (vLLM sizes its own)"
        )
    if fallback.source == "vllm":
        return ConfigProblem(key, f"{f.flag} {text}", allowed, fallback.set_to(fallback.value))
    return ConfigProblem(
        key,
        f"{f.flag} {text}",
        f"{allowed}, as {fallback.key} takes",
        f"set {f.flag} in {key} to {fallback.value}, or remove it ({fallback.key} then sets it)",
    )


def _pd_buffer(entry: Endpoint) -> tuple[Given, list[ConfigProblem]]:
    """pdBufferSize, or environmentVariables.PD_BUFFER_SIZE parsed as pdBufferSize is."""
    e = entry.config
    typed = Given(e.pd_buffer_size, entry.config_key("pdBufferSize"))
    if "PD_BUFFER_SIZE" not in e.environment_variables:
        return typed, []
    env = entry.config_key("environmentVariables")
    key = full_key((*entry.path, "environmentVariables", "PD_BUFFER_SIZE"))
    text = e.environment_variables["PD_BUFFER_SIZE"]
    try:
        return Given(_BYTES.validate_python(text), key, source="environment"), []
    except ValidationError as exc:
        reason = str(exc.errors()[0].get("ctx", {}).get("error", "a byte size"))
    if text is None:
        reason = "a byte size (null would take PD_BUFFER_SIZE off the pods, and with it the buffer the sizing and the policies judge)"
    size = f"{e.pd_buffer_size // GIB}GiB" if e.pd_buffer_size % GIB == 0 else e.pd_buffer_size
    return typed, [
        ConfigProblem(
            key,
            text,
            f"{reason}, as {typed.key} takes",
            f'set {key} to "{size}" (what {typed.key} gives), or remove PD_BUFFER_SIZE from {env}',
        )
    ]
