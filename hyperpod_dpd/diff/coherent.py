"""Coherent changes: an advisory of `hyperpod-dpd diff` (and so of the pull request comment) when
a DPD InferenceEndpointConfig changes in place something both pools must agree on.

The operator runs each role as its own Deployment and rolls them separately, so for the minutes
a roll takes (a 70B worker starts in 5-10 minutes from S3: AWS DPD troubleshooting page) old
prefill workers send KV to new decode workers, or the reverse. What the two sides of a transfer
must share then differs: the server (image: vLLM, LMCache, NIXL), the weights (model, revision),
the KV layout (tensor/pipeline parallel size per role, dtype, KV cache dtype, block size,
max-model-len, quantization) and the connector's settings (--kv-transfer-config, LMCache/NIXL
variables, the hash seed LMCache keys use, PD_BUFFER_SIZE). Users of every P/D system ask for
rollouts that keep the two coherent (llm-d/llm-d#499, ai-dynamo/grove#638,
kubernetes-sigs/lws#907, volcano-sh/kthena#1406); none is offered by the operator. The safe
change is the canary recipe: a candidate endpoint with the change, shifted to by `traffic`
(docs/deploy.md#upgrade-the-model-without-mixed-versions).

Replica counts, autoscaling bounds, routing settings and `traffic` change nothing a transfer
depends on: they get no advisory. A colocated endpoint has no transfer between pools.

The level is the head stack's (plan.json `diffRules`): advisory, or mandatory through
hyperpod-dpd:policy (advisoriesMandatory, or enforcement of hyperpod-dpd-coherent-change), and
then `diff` exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.images import ImageRefError, parse_image
from core.vllm.vllm_args import flag_value, merge_args
from core.vocabulary import COHERENT_CHANGE_RULE
from hyperpod_dpd.diff.values import SIZE_PATH, shown

IEC_TYPE = "InferenceEndpointConfig"
ROLES = (("prefill", "prefillSpec"), ("decode", "decodingSpec"))
# vLLM flags whose value must match on both ends of a KV transfer (vllm/engine/arg_utils.py of
# the pinned vLLM: core/vllm/vllm_flags.json has each).
PAIRED_FLAGS = (
    "--tensor-parallel-size",
    "--pipeline-parallel-size",
    "--dtype",
    "--kv-cache-dtype",
    "--block-size",
    "--max-model-len",
    "--quantization",
    "--kv-transfer-config",
    "--revision",
    "--tokenizer",
)
# Worker variables the connector reads (LMCache's LMCACHE_*, NIXL's and UCX's), the hash seed
# LMCache keys use and the decoder's KV buffer.
PAIRED_ENV_PREFIXES = ("LMCACHE_", "NIXL_", "UCX_", "FI_")
PAIRED_ENV = ("PYTHONHASHSEED", "PD_BUFFER_SIZE")
HAZARD = (
    "the operator rolls the prefill and decode Deployments separately, so while they roll, old "
    "prefill workers send KV to new decode workers (or the reverse) across different versions "
    "or KV layouts"
)
ANSWER = (
    "deploy the change as a candidate endpoint (hyperpod-dpd:endpoints.<new key>, its own "
    "checkpoint if the model changes) beside this one and move hyperpod-dpd:traffic to it; roll "
    "back by routing (docs/deploy.md#upgrade-the-model-without-mixed-versions)"
)


@dataclass(frozen=True)
class CoherentChange:
    """Fields of one DPD endpoint, changed in place, that both pools must agree on."""

    resource: str  # the IEC's resource name in the plan
    endpoint: str  # namespace/name
    fields: dict[str, tuple[str, str]]  # field -> (base, head), as text
    level: str = "advisory"  # or "mandatory" (the head stack's policy)

    @property
    def message(self) -> str:
        changed = "; ".join(f"{f}: {a} -> {b}" for f, (a, b) in self.fields.items())
        return f"endpoint {self.endpoint} changes in place {changed}: {HAZARD}. Instead: {ANSWER}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": COHERENT_CHANGE_RULE,
            "enforcement": self.level,
            "resource": self.resource,
            "endpoint": self.endpoint,
            "fields": {f: {"base": a, "head": b} for f, (a, b) in self.fields.items()},
            "message": self.message,
        }


def _env(entries: Any) -> dict[str, Any]:
    return {e.get("name"): e.get("value") for e in entries or [] if isinstance(e, dict)}


def _paired_env(env: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in env.items()
        if isinstance(k, str) and (k in PAIRED_ENV or k.startswith(PAIRED_ENV_PREFIXES))
    }


def paired_fields(spec: dict[str, Any]) -> dict[str, Any] | None:
    """What both pools of one IEC spec must agree on, by field (None: not DPD)."""
    pd = spec.get("pdSpec")
    if not isinstance(pd, dict):
        return None
    worker = spec.get("worker") or {}
    source = spec.get("modelSourceConfig") or {}
    out: dict[str, Any] = {
        "image": worker.get("image"),
        "model": spec.get("modelName"),
        "checkpoint": source.get("modelLocation") or source.get("huggingFaceModel"),
    }
    worker_args = list(worker.get("args") or [])
    worker_env = _env(worker.get("environmentVariables"))
    for role, key in ROLES:
        role_spec = pd.get(key) or {}
        args = merge_args(worker_args, list(role_spec.get("args") or []))
        for flag in PAIRED_FLAGS:
            out[f"{role} {flag}"] = flag_value(args, flag)
        env = _paired_env(worker_env | _env(role_spec.get("environmentVariables")))
        for name, value in env.items():
            out[f"{role} {name}"] = value
    return out


def _text(name: str, value: Any) -> str:
    """A field's value whole (an image or a revision is read to its last character), a size in
    human units as the diff shows it (8 GiB, not 8589934592)."""
    if SIZE_PATH.search(name):
        return shown(name, value)
    return "unset" if value is None else str(value)


def image_change(base: Any, head: Any) -> str | None:
    """What an image change is when the tag stays and only the digest beside it changes: still a
    roll of both pools, and not always to the build the running pods have (they pulled the tag
    when they started; it may have moved since)."""
    try:
        a, b = parse_image(str(base)), parse_image(str(head))
    except ImageRefError:
        return None
    if a.familiar_tagged != b.familiar_tagged or a.digest == b.digest:
        return None
    if a.digest is None:
        return (
            f"the same tag, now pinned by digest: both pools roll to the build {b.digest} "
            "names, which is the running pods' build only if the tag has not moved since they "
            "pulled it"
        )
    if b.digest is None:
        return "the same tag, its digest dropped: each new pod runs whatever the tag names then"
    return "the same tag, another digest: another build"


def coherent_changes(
    base: dict[str, dict[str, Any]], head: dict[str, dict[str, Any]], level: str = "advisory"
) -> list[CoherentChange]:
    """Per IEC in both plans (resources by URN), DPD on both sides: the paired fields changed
    (none when the stack's policy disables the rule)."""
    if level == "disabled":
        return []
    out = []
    for urn in sorted(base.keys() & head.keys()):
        a, b = base[urn], head[urn]
        if not str(b.get("type", "")).endswith(f":{IEC_TYPE}"):
            continue
        fa = paired_fields(((a.get("inputs") or {}).get("spec")) or {})
        fb = paired_fields(((b.get("inputs") or {}).get("spec")) or {})
        if fa is None or fb is None:
            continue
        changed = {
            name: (_text(name, fa.get(name)), _text(name, fb.get(name)))
            for name in dict.fromkeys([*fa, *fb])
            if fa.get(name) != fb.get(name)
        }
        note = image_change(fa.get("image"), fb.get("image"))
        if note is not None:
            base_image, head_image = changed["image"]
            changed["image"] = (base_image, f"{head_image} ({note})")
        if changed:
            meta = (b.get("inputs") or {}).get("metadata") or {}
            where = f"{meta.get('namespace', 'default')}/{meta.get('name', b.get('name'))}"
            out.append(CoherentChange(str(b.get("name")), where, changed, level))
    return out
