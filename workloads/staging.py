"""Staging the checkpoint into the model bucket as part of `pulumi up`: an in-cluster Job.

The Job runs this repository's staging code (workloads/checkpoint, shipped in a ConfigMap) on a
system node, in-Region, with an IRSA role that can write only the model's prefix and the
Hugging Face token from a Pulumi secret through a Kubernetes Secret. Pulumi waits for the Job to
complete, so the endpoint, which depends on it, only ever points at a complete, verified
checkpoint (the manifest object is written last). The Job's name derives from (source,
revision, prefix): it changes, and the Job runs again, only when those change.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from core.vocabulary import role_node_selector
from infra.iam import allow, document, irsa_trust
from settings.model import StackSettings
from workloads.checkpoint.job import job_command

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "hyperpod-dpd-system"
SERVICE_ACCOUNT = "checkpoint-stager"
# Base image: a stock Python; the Job installs the two pinned packages the staging code needs.
IMAGE = "public.ecr.aws/docker/library/python:3.11-slim-bookworm"
PIP_PACKAGES = ("boto3[crt]==1.44.8", "huggingface_hub==2.4.0")  # same pins as requirements.txt
SCRATCH_LIMIT = "50Gi"  # one Hub file at a time is staged here (shards are ~5 GB)
CODE_FILES = ("core/__init__.py", "core/units.py", "workloads/__init__.py")


def code_files() -> dict[str, str]:
    """ConfigMap key -> file text: the staging package and the few modules it imports. Keys
    replace '/' with '-' (ConfigMap keys allow no '/'; module file names never contain '-')."""
    paths = [
        *CODE_FILES,
        *(
            p.relative_to(ROOT).as_posix()
            for p in sorted((ROOT / "workloads/checkpoint").glob("*.py"))
        ),
    ]
    return {p.replace("/", "-"): (ROOT / p).read_text() for p in paths}


def job_identity(source: str, revision: str | None, prefix: str) -> str:
    return hashlib.sha256(f"{source}\n{revision}\n{prefix}".encode()).hexdigest()[:10]


@dataclass(frozen=True)
class StagingArgs:
    settings: StackSettings
    provider: k8s.Provider
    model_bucket_name: pulumi.Input[str]
    model_bucket_arn: pulumi.Input[str]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    hf_token: pulumi.Output[str] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the system nodes


class CheckpointStaging(pulumi.ComponentResource):
    job: k8s.batch.v1.Job

    def __init__(self, name: str, args: StagingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("hyperpod-dpd:workloads:CheckpointStaging", name, None, opts)
        self._name, self._args = name, args
        c = args.settings.checkpoint
        self.prefix = c.effective_prefix
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=args.provider)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace", metadata={"name": NAMESPACE}, opts=k8s_opts
        )
        role = self._create_role()
        account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account",
            metadata={
                "name": SERVICE_ACCOUNT,
                "namespace": NAMESPACE,
                "annotations": {"eks.amazonaws.com/role-arn": role.arn},
            },
            opts=pulumi.ResourceOptions.merge(
                k8s_opts, pulumi.ResourceOptions(depends_on=[namespace])
            ),
        )
        code = k8s.core.v1.ConfigMap(
            f"{name}-code",
            metadata={"name": "checkpoint-staging-code", "namespace": NAMESPACE},
            data=code_files(),
            opts=pulumi.ResourceOptions.merge(
                k8s_opts, pulumi.ResourceOptions(depends_on=[namespace])
            ),
        )
        secret = None
        if args.hf_token is not None:
            secret = k8s.core.v1.Secret(
                f"{name}-hf-token",
                metadata={"name": "hf-token", "namespace": NAMESPACE},
                string_data={"token": args.hf_token},  # a Pulumi secret: stays encrypted in state
                opts=pulumi.ResourceOptions.merge(
                    k8s_opts, pulumi.ResourceOptions(depends_on=[namespace])
                ),
            )
        self.job = self._create_job(
            k8s_opts, [account, code, *([secret] if secret else []), *args.depends_on]
        )
        self.register_outputs({"prefix": self.prefix, "job": self.job.metadata["name"]})

    def _create_role(self) -> aws.iam.Role:
        a = self._args
        role = aws.iam.Role(
            f"{self._name}-role",
            assume_role_policy=irsa_trust(
                a.oidc_provider_arn, a.oidc_issuer_url, NAMESPACE, SERVICE_ACCOUNT
            ),
            tags=a.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        objects = pulumi.Output.concat(a.model_bucket_arn, f"/{self.prefix}/*")
        self.policy = aws.iam.RolePolicy(
            f"{self._name}-policy",
            role=role.id,
            # Writes only under the model's prefix (what workloads/checkpoint needs: multipart
            # uploads, read-back of checksums, deletes of a stale manifest).
            policy=document(
                {
                    **allow(
                        ["s3:ListBucket", "s3:ListBucketMultipartUploads"],
                        [a.model_bucket_arn],
                        "ListPrefix",
                    ),
                    "Condition": {"StringLike": {"s3:prefix": [self.prefix, f"{self.prefix}/*"]}},
                },
                allow(["s3:GetBucketLocation"], [a.model_bucket_arn], "CheckBucketRegion"),
                allow(
                    [
                        "s3:PutObject",
                        "s3:GetObject",
                        "s3:DeleteObject",
                        "s3:AbortMultipartUpload",
                        "s3:GetObjectAttributes",
                    ],
                    [objects],
                    "WritePrefix",
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return role

    def _create_job(self, k8s_opts: pulumi.ResourceOptions, depends_on: list) -> k8s.batch.v1.Job:
        s, c = self._args.settings, self._args.settings.checkpoint
        command = job_command(
            source=c.source,
            dest=pulumi.Output.concat("s3://", self._args.model_bucket_name, f"/{self.prefix}"),
            region=s.region,
            revision=c.revision,
            tmp_limit=SCRATCH_LIMIT.replace("Gi", "GiB"),
        )
        install = "pip install --quiet --no-cache-dir " + " ".join(f"'{p}'" for p in PIP_PACKAGES)
        script = pulumi.Output.all(*command).apply(
            lambda parts: f"{install} && cd /app && exec " + " ".join(_quote(p) for p in parts)
        )
        env = [
            {"name": "AWS_REGION", "value": s.region},
            {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
            {"name": "HF_XET_HIGH_PERFORMANCE", "value": "1"},
            {"name": "HF_XET_CHUNK_CACHE_SIZE_BYTES", "value": "0"},
        ]
        if self._args.hf_token is not None:
            env.append(
                {
                    "name": "HF_TOKEN",
                    "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}},
                }
            )
        items = [{"key": k, "path": k.replace("-", "/")} for k in code_files()]
        identity = job_identity(c.source, c.revision, self.prefix)
        return k8s.batch.v1.Job(
            f"{self._name}-job",
            metadata={
                "name": f"stage-checkpoint-{identity}",
                "namespace": NAMESPACE,
                "labels": {"hyperpod-dpd/checkpoint": identity},
            },
            spec={
                "backoffLimit": 3,  # a rerun resumes: only what is missing or wrong is sent
                "template": {
                    "spec": {
                        "serviceAccountName": SERVICE_ACCOUNT,
                        "restartPolicy": "Never",
                        "nodeSelector": role_node_selector("system"),
                        "containers": [
                            {
                                "name": "stage",
                                "image": IMAGE,
                                "command": ["/bin/sh", "-c", script],
                                "env": env,
                                "resources": {
                                    "requests": {
                                        "cpu": "4",
                                        "memory": "8Gi",
                                        "ephemeral-storage": SCRATCH_LIMIT,
                                    },
                                    "limits": {"memory": "16Gi", "ephemeral-storage": "60Gi"},
                                },
                                "volumeMounts": [
                                    {"name": "code", "mountPath": "/app"},
                                    {"name": "scratch", "mountPath": "/scratch"},
                                ],
                            }
                        ],
                        "volumes": [
                            {
                                "name": "code",
                                "configMap": {"name": "checkpoint-staging-code", "items": items},
                            },
                            {"name": "scratch", "emptyDir": {"sizeLimit": SCRATCH_LIMIT}},
                        ],
                    }
                },
            },
            opts=pulumi.ResourceOptions.merge(
                k8s_opts,
                pulumi.ResourceOptions(
                    depends_on=[*depends_on, self.policy],
                    # ~140 GB for a 70B model; Pulumi waits for the Job to succeed.
                    custom_timeouts=pulumi.CustomTimeouts(create="4h", update="4h"),
                ),
            ),
        )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
