"""The checks of what an endpoint hands its workers: chunked-prefill knobs set in one place, no
environment the pods' owners set, a fixed hash seed, a name the operator's Service can take."""

from __future__ import annotations

from core.problems import ConfigProblem
from settings.config.errors import full_key, set_fix
from settings.endpoint.model import EndpointConfig


def check_colocated(
    e: EndpointConfig, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """The chunked-prefill knobs: each flag set in one place only (the step budget against the
    batch the worker runs is settings/endpoint/number_checks.py's, at the effective --max-num-seqs)."""
    c = e.colocated
    problems = []
    for flag, field, value in c.settings():
        if any(a.split("=")[0] == flag for a in e.decode.args):
            key = full_key((*path, "colocated", field))
            decode_args = full_key((*path, "decode", "args"))
            problems.append(ConfigProblem(
                key, value, f"{flag} given once ({decode_args.partition(':')[2]} also sets it)",
                f"keep {key} and remove {flag} from {decode_args}",
            ))  # fmt: skip
    return problems


# Variables the operator or NVIDIA's device plugin sets on the worker pods: a value here would
# fight theirs (the GPUs a pod was given, the model path, the port).
OWNED_ENVIRONMENT = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "NVIDIA_REQUIRE_CUDA",
        "NEURON_RT_VISIBLE_CORES",
        "HOSTNAME",
        "KUBERNETES_SERVICE_HOST",
        "KUBERNETES_SERVICE_PORT",
        "POD_NAME",
        "POD_NAMESPACE",
    }
)
HASH_SEED_MAX = 4294967295  # Python: PYTHONHASHSEED is "random" or 0..4294967295


def check_worker_inputs(
    e: EndpointConfig, path: tuple[str, ...] = ("endpoint",)
) -> list[ConfigProblem]:
    """Environment the pods' owners set, a hash seed Python accepts and that is fixed (LMCache
    keys hash with it), a name the operator's Service can take (DNS-1035: it starts with a
    letter). PD_BUFFER_SIZE is a number: settings/endpoint/numbers.py parses it as pdBufferSize."""
    problems = []
    env_key = full_key((*path, "environmentVariables"))
    for name in sorted(set(e.environment_variables) & OWNED_ENVIRONMENT):
        problems.append(ConfigProblem(
            f"{env_key}.{name}", e.environment_variables[name],
            "no variable the operator or the GPU device plugin sets on the pods",
            f"remove {name} from {env_key}",
        ))  # fmt: skip
    seed = e.environment_variables.get("PYTHONHASHSEED")
    # "random" is Python's own word: the hash-seed policy judges it (a mandatory rule).
    if seed not in (None, "random") and not (seed.isdigit() and int(seed) <= HASH_SEED_MAX):
        problems.append(ConfigProblem(
            f"{env_key}.PYTHONHASHSEED", seed,
            f"what Python accepts: a seed from 0 to {HASH_SEED_MAX} (fixed and the same on both "
            "roles: LMCache keys use Python's hash())",
            f"set {env_key}.PYTHONHASHSEED to \"0\" (the DPD docs' value), or remove it",
        ))  # fmt: skip
    if not e.name[:1].isalpha():
        key = full_key((*path, "name"))
        problems.append(ConfigProblem(
            key, e.name,
            "a name starting with a letter (the operator names Services after it, and a "
            "Service name is a DNS-1035 label)",
            f"prefix it, e.g. {set_fix(key, 'llm-' + e.name)}",
        ))  # fmt: skip
    return problems
