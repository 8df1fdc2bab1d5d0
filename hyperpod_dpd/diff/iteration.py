"""One variable per iteration: an advisory of `hyperpod-dpd diff` when one change to a DPD
InferenceEndpointConfig alters more than one of the variables a DPD endpoint is scaled by, one per
iteration once a canary has shown DPD pays off: prefill workers, decode workers, TP/PP, the
connector backend, network placement. Changing two at once leaves a regression (or a gain)
without a cause.

Each variable is read off the IEC both plans hold (resources.json inputs, what the operator
receives), on both sides of the change:

  prefill replicas   pdSpec.prefillSpec.replicas, pdSpec.autoScalingSpec.prefillAutoScaling
                     .{minReplicaCount,maxReplicaCount}
  decode replicas    the same for decodingSpec / decodingAutoScaling
  TP/PP              --tensor-parallel-size and --pipeline-parallel-size of each role: the worker
                     args with the role's merged in (the operator's rule, core/vllm/vllm_args.py)
  KV connector       PD_BUFFER_SIZE (worker or role env) and --kv-transfer-config of each role
  placement          pdSpec.topologySpec, instanceType(s), nodeAffinity, the roles' nodeSelector

A colocated endpoint (no pdSpec on either side) and a switch between modes get no advisory: the
recipe's iterations are the scaling of a DPD endpoint already in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.units import format_bytes
from core.vllm.vllm_args import flag_value, merge_args

IEC_TYPE = "InferenceEndpointConfig"
REASON = (
    "change one variable per iteration so a regression points at its cause "
    "(prefill workers, decode workers, TP/PP, connector backend, network placement, one at a "
    "time)"
)
ROLES = (("prefill", "prefillSpec", "prefillAutoScaling"),
         ("decode", "decodingSpec", "decodingAutoScaling"))  # fmt: skip


@dataclass(frozen=True)
class Advisory:
    """More than one variable of one DPD endpoint changed in one diff."""

    resource: str  # the IEC's resource name in the plan
    endpoint: str  # namespace/name of the InferenceEndpointConfig
    variables: dict[str, tuple[str, str]]  # variable -> (base, head), as text

    @property
    def message(self) -> str:
        changed = "; ".join(f"{v}: {a} -> {b}" for v, (a, b) in self.variables.items())
        return (
            f"endpoint {self.endpoint} changes {len(self.variables)} variables at once "
            f"({changed}): {REASON}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "one-variable-per-iteration",
            "resource": self.resource,
            "endpoint": self.endpoint,
            "variables": {v: {"base": a, "head": b} for v, (a, b) in self.variables.items()},
            "message": self.message,
        }


def _env(entries: Any) -> dict[str, Any]:
    return {e.get("name"): e.get("value") for e in entries or [] if isinstance(e, dict)}


def _text(value: Any, name: str = "") -> str:
    if name.endswith("PD_BUFFER_SIZE") and str(value).isdigit():
        return format_bytes(int(value))  # 8 GiB, not 8589934592
    if isinstance(value, dict):
        shown = ", ".join(f"{k}={_text(v)}" for k, v in sorted(value.items()) if v is not None)
        return "{" + shown + "}"
    return "unset" if value is None else str(value)


def variables(spec: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """The recipe's variables of one IEC spec (None: not DPD)."""
    pd = spec.get("pdSpec")
    if not isinstance(pd, dict):
        return None
    worker = spec.get("worker") or {}
    worker_args = list(worker.get("args") or [])
    worker_env = _env(worker.get("environmentVariables"))
    scaling = pd.get("autoScalingSpec") or {}
    out: dict[str, dict[str, Any]] = {f"{role} replicas": {} for role, _, _ in ROLES}
    out |= {"TP/PP": {}, "KV connector": {}, "placement": {}}
    out["placement"] |= {
        "topologySpec": pd.get("topologySpec"),
        "instanceType": spec.get("instanceType"),
        "instanceTypes": spec.get("instanceTypes"),
        "nodeAffinity": spec.get("nodeAffinity"),
    }
    for role, key, auto_key in ROLES:
        role_spec = pd.get(key) or {}
        auto = scaling.get(auto_key) or {}
        out[f"{role} replicas"] = {
            "replicas": role_spec.get("replicas"),
            "min": auto.get("minReplicaCount"),
            "max": auto.get("maxReplicaCount"),
        }
        args = merge_args(worker_args, list(role_spec.get("args") or []))
        out["TP/PP"] |= {
            f"{role} TP": flag_value(args, "--tensor-parallel-size"),
            f"{role} PP": flag_value(args, "--pipeline-parallel-size"),
        }
        env = worker_env | _env(role_spec.get("environmentVariables"))
        out["KV connector"] |= {
            f"{role} PD_BUFFER_SIZE": env.get("PD_BUFFER_SIZE"),
            f"{role} --kv-transfer-config": flag_value(args, "--kv-transfer-config"),
        }
        out["placement"] |= {
            f"{role} nodeSelector": role_spec.get("nodeSelector"),
            f"{role} nodeAffinity": role_spec.get("nodeAffinity"),
        }
    return out


def _changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, str] | None:
    """What changed of one variable, as text (None: nothing)."""
    keys = [k for k in before if before[k] != after.get(k)]
    if not keys:
        return None

    def shown(values: dict[str, Any]) -> str:
        # The fixed replica count bare ("1 -> 2"), every other key by its name.
        return ", ".join(
            _text(values.get(k)) if k == "replicas" else f"{k} {_text(values.get(k), k)}"
            for k in keys
        )

    return shown(before), shown(after)


def advisories(base: dict[str, dict[str, Any]], head: dict[str, dict[str, Any]]) -> list[Advisory]:
    """Per IEC in both plans (resources by URN): an advisory when more than one variable changed."""
    out = []
    for urn in sorted(base.keys() & head.keys()):
        a, b = base[urn], head[urn]
        if not str(b.get("type", "")).endswith(f":{IEC_TYPE}"):
            continue
        spec_a = ((a.get("inputs") or {}).get("spec")) or {}
        spec_b = ((b.get("inputs") or {}).get("spec")) or {}
        va, vb = variables(spec_a), variables(spec_b)
        if va is None or vb is None:
            continue
        changed = {}
        for name in va:
            change = _changes(va[name], vb[name])
            if change is not None:
                changed[name] = change
        if len(changed) > 1:
            meta = (b.get("inputs") or {}).get("metadata") or {}
            where = f"{meta.get('namespace', 'default')}/{meta.get('name', b.get('name'))}"
            out.append(Advisory(str(b.get("name")), where, changed))
    return out
