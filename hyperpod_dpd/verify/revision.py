"""Which checkpoint copy the live endpoint loads, against the one the stack stages for it.

The stack stages each endpoint's checkpoint under a prefix of its own in the model bucket
(settings/endpoint/checkpoints.py; models/<org>/<model>/<revision> by default), and its IEC
loads it through spec.modelSourceConfig (s3Storage.bucketName + modelLocation, specs/iec.py).
An IEC that loads another copy serves another revision than the stack says: `pulumi up` has not
run since the checkpoint changed, or the IEC was edited by hand. Pure: the IEC's JSON and the
stack's facts (results.StagedCopy).
"""

from __future__ import annotations

from typing import Any

from hyperpod_dpd.verify import causes
from hyperpod_dpd.verify.results import Check, StagedCopy, Target

SERVED_COPY = "serves the staged copy"


def live_copy(iec: dict[str, Any]) -> tuple[str, str | None, str]:
    """(source type, bucket, prefix) the IEC loads; prefix without leading or trailing '/'."""
    source = (iec.get("spec") or {}).get("modelSourceConfig") or {}
    bucket = (source.get("s3Storage") or {}).get("bucketName")
    prefix = str(source.get("modelLocation") or "").strip("/")
    return str(source.get("modelSourceType") or "?"), (str(bucket) if bucket else None), prefix


def _meaning(staged: StagedCopy, kind: str, bucket: str | None, prefix: str) -> str:
    """What the live location is, in the stack's terms."""
    if kind != "s3":
        return f"a {kind} source, not a copy staged in S3"
    if staged.bucket is not None and bucket != staged.bucket:
        return "a copy in another bucket than the stack's model bucket"
    meaning = dict(staged.copies).get(prefix)
    return f"{meaning}: another copy of this stack" if meaning else "no copy this stack stages"


def judge_served_copy(iec: dict[str, Any], target: Target) -> Check | None:
    """None without a stack (nothing to compare with)."""
    staged = target.staged
    if staged is None:
        return None
    kind, bucket, prefix = live_copy(iec)
    live = f"s3://{bucket or '?'}/{prefix}" if kind == "s3" else f"{kind} {prefix or '?'}"
    wanted = f"s3://{staged.bucket or '<model bucket>'}/{staged.prefix}"
    same_bucket = staged.bucket is None or bucket == staged.bucket
    if kind == "s3" and prefix == staged.prefix and same_bucket:
        unjudged = f" (bucket not compared: {staged.bucket_note})" if staged.bucket is None else ""
        return Check.ok(SERVED_COPY, f"{live}: {staged.revision}{unjudged}")
    detail = (
        f"the IEC loads {live} ({_meaning(staged, kind, bucket, prefix)}); the stack stages "
        f"{wanted} ({staged.revision}) for it"
    )
    context = {
        "name": target.name,
        "namespace": target.namespace,
        "stack": staged.stack,
        "key": staged.key,
    }
    return Check.failed(SERVED_COPY, detail, causes.OTHER_COPY, **context)
