"""Whether anyone wrote the nodes' lifecycle scripts since `pulumi up`: the S3 versions under
`lifecycle/` against the version of on_create.sh that `pulumi up` wrote (the stack output
lifecycleScriptVersionId). `hyperpod-dpd preflight` and `verify --stack` both ask.

The digest check (boot_script.py) sees what S3 serves now; a script replaced, run by the nodes
created or recovered meanwhile, then put back, has the original digest again. The bucket is
versioned and only the deployers may delete versions or suspend versioning (specs/lifecycle.py),
so every such write stays as a version newer than the stack's: listed here, it fails.
ListObjectVersions returns each version and delete marker with its key, VersionId, IsLatest and
LastModified (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html;
the caller needs s3:ListBucketVersions on the bucket).

What resets it: a refresh (`pulumi up --refresh`, `pulumi refresh`) reads the object's latest
version into the stack (the provider's read sets version_id from HeadObject: terraform-provider-aws
internal/service/s3/object.go resourceObjectRead), so the fix runs it last. Only who may write
the stack's state can do that; the S3 versions stay either way.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_dpd.shared.boot_script import REF, Deployed, Verdict
from specs.lifecycle import KEY_PREFIX, ON_CREATE_KEY

CHECK = "boot script not rewritten"
CAUSE = (
    "someone wrote the nodes' lifecycle scripts after `pulumi up` (a replaced script put back "
    "afterwards reads the same, but every node HyperPod created or recovered in between ran "
    "the replacement as root)"
)
FIX = (
    "see who and when (`aws s3api list-object-versions --bucket {bucket} --prefix {prefix}`, "
    "CloudTrail); replace the nodes launched since the first of those versions; only then run "
    "`pulumi up --refresh --stack {stack}` as a deployer: it uploads the stack's script if it "
    "differs and records the object's latest version as the stack's, which ends this failure"
)


def history(s3: Any, where: Deployed) -> Verdict:
    """FAIL when a version or delete marker under lifecycle/ is newer than the stack's."""
    if where.bucket is None:
        return Verdict("skip", f"not compared: {where.note}; not deployed yet, or run where "
                       "`pulumi stack output` works")  # fmt: skip
    if where.version_id is None:
        return Verdict("skip", "not compared: the stack records no lifecycleScriptVersionId "
                       "(last deployed by an earlier hyperpod-dpd); the next `pulumi up` "
                       "records it")  # fmt: skip
    prefix = f"{KEY_PREFIX}/"
    try:
        versions, markers = _listed(s3, where.bucket, prefix)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        return Verdict("FAIL", f"s3://{where.bucket}/{prefix} versions could not be listed "
                       f"({code})", fix="run as a deployer or an admin: the credentials need "
                       "s3:ListBucketVersions on the lifecycle bucket", ref=REF)  # fmt: skip
    except BotoCoreError as exc:
        return Verdict("FAIL", f"s3://{where.bucket}/{prefix} versions could not be listed "
                       f"({exc})", fix="run with AWS credentials of the stack's account",
                       ref=REF)  # fmt: skip
    failed = {
        "cause": CAUSE,
        "fix": FIX.format(bucket=where.bucket, prefix=prefix, stack=where.stack),
        "ref": REF,
    }
    ours = next(
        (v for v in versions if v["Key"] == ON_CREATE_KEY and v["VersionId"] == where.version_id),
        None,
    )
    if ours is None:
        return Verdict("FAIL", f"s3://{where.bucket}/{ON_CREATE_KEY} has no version "
                       f"{where.version_id}, the one `pulumi up` wrote: it was deleted for good, "
                       "which only the deployers may do", **failed)  # fmt: skip
    later = newer(ours, versions, markers)
    if not later:
        return Verdict("pass", f"version {where.version_id} of {ON_CREATE_KEY}, written by "
                       f"`pulumi up` {ours['LastModified'].isoformat()}, is the latest; "
                       f"nothing under {prefix} written since")  # fmt: skip
    said = ", ".join(_entry(e) for e in later)
    return Verdict("FAIL", f"written under s3://{where.bucket}/{prefix} since `pulumi up` "
                   f"wrote version {where.version_id} of {ON_CREATE_KEY} "
                   f"({ours['LastModified'].isoformat()}): {said}", **failed)  # fmt: skip


def newer(ours: dict, versions: list[dict], markers: list[dict]) -> list[dict]:
    """The versions and delete markers written after `ours`. Of its own key: any when `ours` is
    no longer the latest (IsLatest), those dated no earlier; of another key under the prefix,
    those dated no earlier (LastModified has a resolution of a second: a write in the same
    second as `pulumi up`'s counts as after it)."""
    since = ours["LastModified"]

    def after(entry: dict) -> bool:
        if entry["Key"] != ours["Key"]:
            return entry["LastModified"] >= since
        if entry is ours or ours.get("IsLatest"):
            return False
        return entry["LastModified"] >= since or bool(entry.get("IsLatest"))

    out = [e for e in [*versions, *markers] if after(e)]
    return sorted(out, key=lambda e: (e["LastModified"], e["Key"]))


def _listed(s3: Any, bucket: str, prefix: str) -> tuple[list[dict], list[dict]]:
    versions: list[dict] = []
    markers: list[dict] = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        versions += page.get("Versions", [])
        markers += [{**m, "deleted": True} for m in page.get("DeleteMarkers", [])]
    return versions, markers


def _entry(e: dict) -> str:
    what = "delete marker" if e.get("deleted") else "version"
    return f"{e['Key']} {what} {e['VersionId']} ({e['LastModified'].isoformat()})"
