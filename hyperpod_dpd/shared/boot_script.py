"""Whether the nodes' boot script in S3 is the one `pulumi up` uploaded: `hyperpod-dpd preflight`
and `verify --stack` both ask (a check each; hyperpod_dpd/shared/node_boot.py lists them with
the script's version history and the cluster's lifecycle configuration).

on_create.sh runs as root on every node HyperPod creates or recovers (specs/lifecycle.py says why
only the deployers may write it). `pulumi up` records where it put the script and its SHA-256 as
the stack outputs lifecycleBucket and lifecycleScriptSha256; this reads the object back
(s3:GetObject, with the caller's own credentials) and hashes what S3 serves. Another digest
means someone replaced it: every node created or recovered since ran their script.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from hyperpod_dpd.shared.stack_outputs import OutputUnavailable, stack_outputs
from specs.lifecycle import ON_CREATE_KEY, on_create_sha256

CHECK = "boot script unchanged"
BUCKET_OUTPUT, SHA256_OUTPUT = "lifecycleBucket", "lifecycleScriptSha256"
# Recorded since the execution role's Deny: a stack last deployed before has neither (those
# checks then say so and skip that part).
VERSION_OUTPUT, CLUSTER_OUTPUT = "lifecycleScriptVersionId", "hyperpodClusterArn"
ROLE_OUTPUT = "hyperpodExecutionRoleArn"
REF = "docs/troubleshooting.md#boot-script-changed"
CAUSE = (
    "the lifecycle script in S3 is not the one `pulumi up` uploaded: someone replaced or "
    "deleted it outside the stack (the bucket lets only the stack's deploy role and "
    "hyperpod-dpd:deployerArns write it). Every node HyperPod created or recovered since "
    "ran that script as root"
)
FIX = (
    "find who and when (`aws s3api list-object-versions --bucket {bucket} --prefix "
    "{key}`, CloudTrail); run `pulumi up --refresh --stack {stack}` as a deployer "
    "(it uploads the stack's script again); then replace every node launched since that "
    "version and rotate what they could reach"
)


@dataclass(frozen=True)
class Deployed:
    """Where the last `pulumi up` put the script and its SHA-256 (the stack's outputs); None
    when they cannot be read, `note` says why. With them: the script's S3 version, the HyperPod
    cluster and its execution role, as that `pulumi up` made them (None: not recorded)."""

    stack: str
    bucket: str | None
    sha256: str | None
    note: str = ""
    version_id: str | None = None
    cluster_arn: str | None = None
    execution_role_arn: str | None = None

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{ON_CREATE_KEY}"


@dataclass(frozen=True)
class Verdict:
    result: str  # pass | FAIL | skip
    detail: str
    cause: str = ""
    fix: str = ""
    ref: str = ""


def deployed(project_dir: Path, stack: str) -> Deployed:
    """The stack's outputs of the script and the cluster (one `pulumi stack output --json`)."""
    try:
        outputs = stack_outputs(project_dir, stack)
    except OutputUnavailable as exc:
        return Deployed(stack, None, None, f"no {BUCKET_OUTPUT} output ({exc})")
    bucket, sha256 = outputs.get(BUCKET_OUTPUT), outputs.get(SHA256_OUTPUT)
    if not bucket or not sha256:
        return Deployed(stack, None, None, f"no {BUCKET_OUTPUT} or {SHA256_OUTPUT} output")
    return Deployed(
        stack,
        bucket,
        sha256,
        version_id=outputs.get(VERSION_OUTPUT) or None,
        cluster_arn=outputs.get(CLUSTER_OUTPUT) or None,
        execution_role_arn=outputs.get(ROLE_OUTPUT) or None,
    )


def compare(s3: Any, where: Deployed) -> Verdict:
    """The object in S3 against the digest the stack recorded."""
    if where.bucket is None or where.sha256 is None:
        return Verdict("skip", f"not compared: {where.note}; not deployed yet, or run where "
                       "`pulumi stack output` works")  # fmt: skip
    failed = {
        "cause": CAUSE,
        "fix": FIX.format(bucket=where.bucket, key=ON_CREATE_KEY, stack=where.stack),
        "ref": REF,
    }
    try:
        got = s3.get_object(Bucket=where.bucket, Key=ON_CREATE_KEY)
        body = got["Body"].read()
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code in ("NoSuchKey", "404"):
            return Verdict("FAIL", f"{where.uri} does not exist: it was deleted, and nodes "
                           "HyperPod creates or recovers now fail to provision", **failed)  # fmt: skip
        return Verdict("FAIL", f"{where.uri} could not be read ({code}): the credentials need "
                       "s3:GetObject on it", fix="run as a deployer or an admin", ref=REF)  # fmt: skip
    except BotoCoreError as exc:  # no credentials, no network
        return Verdict("FAIL", f"{where.uri} could not be read ({exc})",
                       fix="run with AWS credentials of the stack's account", ref=REF)  # fmt: skip
    digest = hashlib.sha256(body).hexdigest()
    version = got.get("VersionId") or "?"
    local = on_create_sha256()
    pending = (
        f"; this checkout's on_create.sh ({local[:12]}) differs: the next `pulumi up` uploads it"
        if local != where.sha256
        else ""
    )
    if digest == where.sha256:
        return Verdict("pass", f"{where.uri} (version {version}) is the script `pulumi up` "
                       f"uploaded (sha256 {digest[:12]}){pending}")  # fmt: skip
    modified = got.get("LastModified")
    when = f", written {modified.isoformat()}" if modified is not None else ""
    return Verdict(
        "FAIL",
        f"{where.uri} has sha256 {digest[:12]} (version {version}{when}), not the "
        f"{where.sha256[:12]} `pulumi up` uploaded{pending}",
        **failed,
    )
