"""Staging the checkpoint into the model bucket as part of `pulumi up`: an in-cluster Job.

The Job runs this repository's staging program (the checkpoint/ package with its
sub-packages, shipped in a ConfigMap with the few core modules it imports) on a system node,
in-Region, with an IRSA role that can write only the model's prefix, and the Hugging Face token
from a Pulumi secret through a Kubernetes Secret. Pulumi waits for the Job to complete, so the endpoint, which depends on it, only ever
points at a complete, verified checkpoint (the manifest object is written last). The Job's name
derives from (source, revision, prefix): it changes, and the Job runs again, only when those do.

Only the admins' Jobs run in its namespace, and only the admins exec into them: whoever runs a
pod there could write the weights every endpoint loads (specs/isolation/admission.py).

The pod runs as a non-root user with no privileges and a read-only root file system: what it
writes goes to its volumes (the program, its packages, HOME and TMPDIR to a small work volume;
Hub files to the scratch volume). It installs its packages from requirements-job-staging.txt,
shipped in the ConfigMap, every one pinned by hash (core/job_pods.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from checkpoint.job import job_command
from core.job_pods import (
    JOB_CPU_REQUEST,
    JOB_MEMORY_LIMIT_GIB,
    JOB_MEMORY_REQUEST_GIB,
    container_security_context,
    no_api_token,
    pip_install_user,
    pod_security_context,
)
from core.refs import ref
from core.regions import partition_of, region_environment
from core.versions import JOB_BOTO3
from core.vocabulary import (
    CHECKPOINT_LABEL,
    CHECKPOINT_STAGING,
    CONFIG_MAP_TYPE,
    JOB_TYPE,
    SECRET_TYPE,
    STAGING_NAMESPACE,
    role_node_selector,
)
from settings.checkpoint import CheckpointConfig
from settings.stack import StackSettings
from specs.base import Desired
from specs.iam import allow, role_policy
from specs.isolation.instance_metadata import guarded_namespace
from specs.isolation.pod_security import namespace_desired

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = STAGING_NAMESPACE
SERVICE_ACCOUNT = "checkpoint-stager"
CODE_CONFIG_MAP = "checkpoint-staging-code"
TOKEN_SECRET = "hf-token"
# The Hugging Face token reaches the program as a file of a read-only Secret volume, readable by
# its user alone (0400), never as an environment variable that pip and every child process would
# inherit and /proc/<pid>/environ would show. HF_TOKEN_PATH names the file: huggingface_hub reads
# it (huggingface_hub v1.x src/huggingface_hub/constants.py HF_TOKEN_PATH), and so does the
# staging program (checkpoint/sources/hf.py hub_token).
TOKEN_DIR = "/var/run/secrets/huggingface"
TOKEN_KEY = "token"
TOKEN_PATH = f"{TOKEN_DIR}/{TOKEN_KEY}"
TOKEN_MODE = 0o400
# Base image: a stock Python; the Job installs the two pinned packages the staging code needs
# and their dependencies, each pinned by hash in REQUIREMENTS (from these, by
# scripts/lock_job_requirements.py).
PIP_PACKAGES = (JOB_BOTO3, "huggingface_hub==2.4.0")  # same pins as requirements.txt
REQUIREMENTS = "requirements-job-staging.txt"
REQUIREMENTS_KEY = "requirements.txt"  # its ConfigMap key (a shipped path has no '-')
CODE_DIR = "/code"  # the ConfigMap's mount
# The work volume: the program laid out, HOME (pip's --user site, ~100 MB, and HF_HOME with
# Xet's metadata cache) and TMPDIR. The Hub files go to the scratch volume.
WORK_DIR = "/work"
APP_DIR, HOME_DIR = f"{WORK_DIR}/app", f"{WORK_DIR}/home"
WORK_LIMIT = "5Gi"  # with SCRATCH_LIMIT, within the container's ephemeral-storage limit
SCRATCH_LIMIT = "50Gi"  # one Hub file at a time is staged here (shards are ~5 GB)
# What the staging program imports besides its own package (a test runs it from these alone).
CODE_FILES = (
    "core/__init__.py",
    "core/cli_help.py",
    "core/cli_inputs.py",
    "core/collector.py",
    "core/exits.py",
    "core/json_output.py",
    "core/regions.py",
    "core/units.py",
)


def shipped_paths() -> list[str]:
    """Every file the ConfigMap ships, relative to the repo: the few modules the staging program
    imports besides its own package, then that package as a tree (every *.py under
    checkpoint/, its sub-packages included: the program imports checkpoint.s3.client and so
    on, and a module left out would fail only in the cluster, at its first import)."""
    package = sorted((ROOT / "checkpoint").rglob("*.py"))
    return [*CODE_FILES, *(p.relative_to(ROOT).as_posix() for p in package)]


def config_map_key(path: str) -> str:
    """'checkpoint/s3/client.py' -> 'checkpoint-s3-client.py': ConfigMap keys allow no '/', and
    the Job's unpack loop turns every '-' back into '/', so a shipped path must hold no '-' (a
    module's file name never does; code_files() refuses one that would)."""
    if "-" in path:
        raise ValueError(f"{path}: a file the staging ConfigMap ships must have no '-' in its path")
    return path.replace("/", "-")


def code_files() -> dict[str, str]:
    """ConfigMap key -> file text: the staging package (a tree) and the few modules it imports."""
    return {config_map_key(p): (ROOT / p).read_text() for p in shipped_paths()}


def requirements_text() -> str:
    return (ROOT / REQUIREMENTS).read_text()


def unpack_command(code_dir: str = CODE_DIR, app_dir: str = APP_DIR) -> str:
    """The shell loop that lays the ConfigMap's flat keys out as a tree under `app_dir`
    ('checkpoint-s3-client.py' -> checkpoint/s3/client.py, its directories made first). The
    Job's spec names no file, so a change of the staging code (a module added, moved or
    removed) changes only the ConfigMap, never the (immutable) Job."""
    return (
        f'for f in {code_dir}/*; do p="{app_dir}/$(basename "$f" | tr - /)"; '
        'mkdir -p "${p%/*}"; cp "$f" "$p"; done'
    )


def job_identity(source: str, revision: str | None, prefix: str) -> str:
    return hashlib.sha256(f"{source}\n{revision}\n{prefix}".encode()).hexdigest()[:10]


@dataclass(frozen=True)
class StagingSpec:
    name: str
    prefix: str
    policy: Desired  # the stager role's inline policy
    code: Desired  # ConfigMap with the program
    namespace: Desired  # with its Pod Security labels
    token: Desired | None  # Secret with the Hugging Face token (a Pulumi secret)
    jobs: tuple[Desired, ...]  # one per staged copy: the stack's checkpoint's first
    prefixes: tuple[str, ...]  # where each of `jobs` stages its copy, in the same order
    # Keeps the Job's pod from the instance metadata service (specs/isolation/instance_metadata.py);
    # None: networkPolicy.enabled false.
    metadata_policy: Desired | None = None

    @property
    def job(self) -> Desired:
        """The Job staging the stack's own checkpoint (`checkpoint`)."""
        return self.jobs[0]


def _source_read(source: str, partition: str, index: int = 0) -> list[dict]:
    """An s3:// source is copied server-side by the Job (checkpoint/sources/s3.py): it finds the
    bucket's Region, lists the source prefix, reads its manifest and objects (CopyObject and
    UploadPartCopy read the source with s3:GetObject:
    https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html). Other sources: none.
    `index`: the source's place among the copies' sources (Sids are unique in a policy)."""
    if not source.startswith("s3://"):
        return []
    n = str(index + 1) if index else ""
    bucket, _, key = source.removeprefix("s3://").partition("/")
    key = key.strip("/")
    arn = f"arn:{partition}:s3:::{bucket}"
    listing = allow(["s3:ListBucket"], [arn], f"ListSource{n}")
    if key:
        listing["Condition"] = {"StringLike": {"s3:prefix": [key, f"{key}/*"]}}
    return [
        listing,
        allow(["s3:GetBucketLocation"], [arn], f"CheckSourceRegion{n}"),
        allow(["s3:GetObject"], [f"{arn}/{key}/*" if key else f"{arn}/*"], f"ReadSource{n}"),
    ]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def staging(
    name: str, s: StackSettings, model_bucket_name: str, model_bucket_arn: str, hf_token: str | None
) -> StagingSpec:
    """`model_bucket_*` and `hf_token` are placeholders (the token: a Pulumi secret Output).
    One role, code and token; one Job per staged copy (StackSettings.staged_checkpoints): the
    stack's checkpoint's keeps its name, another's is named after its identity."""
    copies = s.staged_checkpoints()
    prefix = copies[0].effective_prefix
    prefixes = [c.effective_prefix for c in copies]
    parents = (CHECKPOINT_STAGING,)
    # The Job's pod meets `restricted` (specs/isolation/pod_security.py).
    namespace = namespace_desired(
        f"{name}-namespace", parents, NAMESPACE, "restricted", s.eks.kubernetes_version
    )
    objects = [f"{model_bucket_arn}/{p}/*" for p in prefixes]
    sources = list(dict.fromkeys(c.source for c in copies))
    policy = role_policy(
        f"{name}-policy",
        parents,
        ref(f"{name}-role", "id"),
        # Writes only under the model's prefix (what checkpoint/ needs: multipart uploads,
        # read-back of checksums, deletes of a stale manifest). Each action here is one the
        # staging code calls (tests/policies/test_code_grants.py derives them from it).
        {
            **allow(["s3:ListBucket"], [model_bucket_arn], "ListPrefix"),
            "Condition": {
                "StringLike": {"s3:prefix": [k for p in prefixes for k in (p, f"{p}/*")]}
            },
        },
        # ListMultipartUploads (a rerun resumes the uploads it left) carries no s3:prefix key:
        # under the condition above it was denied on every request. Its only resource is the
        # bucket; the code lists with Prefix=<prefix>/ (checkpoint/s3/destination.py). Condition
        # keys per action: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html
        allow(["s3:ListBucketMultipartUploads"], [model_bucket_arn], "ListPrefixUploads"),
        allow(["s3:GetBucketLocation"], [model_bucket_arn], "CheckBucketRegion"),
        allow(
            [
                "s3:PutObject",
                "s3:GetObject",
                "s3:DeleteObject",
                "s3:AbortMultipartUpload",
                # ListParts of an upload a rerun resumes (checkpoint/s3/resume.py).
                "s3:ListMultipartUploadParts",
            ],
            objects,
            "WritePrefix",
        ),
        *(
            statement
            for i, source in enumerate(sources)
            for statement in _source_read(source, partition_of(s.region), i)
        ),
    )
    files = code_files()
    code = Desired(
        CONFIG_MAP_TYPE,
        f"{name}-code",
        parents,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": CODE_CONFIG_MAP, "namespace": NAMESPACE},
            "data": {**files, REQUIREMENTS_KEY: requirements_text()},
        },
    )
    token = None
    if hf_token is not None:
        token = Desired(
            SECRET_TYPE,
            f"{name}-hf-token",
            parents,
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": TOKEN_SECRET, "namespace": NAMESPACE},
                # A Pulumi secret: stays encrypted in state. It lives as long as the stack, not
                # the Job: Pulumi cannot give it an ownerReference to a Job it creates after it,
                # and the stager's service account has no RBAC to delete it (nor should it). A
                # rerun (a new revision) needs it again; `pulumi config rm hyperpod-dpd:hfToken`
                # and `pulumi up` delete it. Only the Job's pod mounts it.
                "stringData": {TOKEN_KEY: hf_token},
            },
        )
    jobs = tuple(
        _job(
            f"{name}-job" if i == 0 else f"{name}-job-{_identity(c)}",
            s,
            c,
            model_bucket_name,
            token,
        )
        for i, c in enumerate(copies)
    )
    egress = guarded_namespace(s, f"{name}-metadata-egress", parents, NAMESPACE)
    return StagingSpec(name, prefix, policy, code, namespace, token, jobs, tuple(prefixes), egress)


def _identity(c: CheckpointConfig) -> str:
    return job_identity(c.source, c.revision, c.effective_prefix)


def _job(
    resource: str,
    s: StackSettings,
    c: CheckpointConfig,
    model_bucket_name: str,
    token: Desired | None,
) -> Desired:
    """The Job that stages copy `c` under its prefix (its Kubernetes name: its identity)."""
    prefix = c.effective_prefix
    command = job_command(
        source=c.source,
        dest=f"s3://{model_bucket_name}/{prefix}",
        region=s.region,
        revision=c.revision,
        tmp_limit=SCRATCH_LIMIT.replace("Gi", "GiB"),
    )
    install = pip_install_user(f"{CODE_DIR}/{REQUIREMENTS_KEY}")
    script = f"{install} && {unpack_command()} && cd {APP_DIR} && exec " + " ".join(
        _quote(p) for p in command
    )
    env = [
        *({"name": k, "value": v} for k, v in region_environment(s.region).items()),
        {"name": "HOME", "value": HOME_DIR},
        {"name": "TMPDIR", "value": WORK_DIR},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
        {"name": "HF_XET_HIGH_PERFORMANCE", "value": "1"},
        {"name": "HF_XET_CHUNK_CACHE_SIZE_BYTES", "value": "0"},
        *s.jobs.environment(),  # a PyPI mirror, when the stack names one
    ]
    mounts = [
        {"name": "code", "mountPath": CODE_DIR, "readOnly": True},
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "work", "mountPath": WORK_DIR},
    ]
    volumes: list[dict] = [
        {"name": "code", "configMap": {"name": CODE_CONFIG_MAP}},
        {"name": "scratch", "emptyDir": {"sizeLimit": SCRATCH_LIMIT}},
        {"name": "work", "emptyDir": {"sizeLimit": WORK_LIMIT}},
    ]
    if token is not None:
        env.append({"name": "HF_TOKEN_PATH", "value": TOKEN_PATH})
        mounts.append({"name": "hf-token", "mountPath": TOKEN_DIR, "readOnly": True})
        volumes.append(
            {
                "name": "hf-token",
                "secret": {
                    "secretName": TOKEN_SECRET,
                    "items": [{"key": TOKEN_KEY, "path": TOKEN_KEY}],
                    # 0400, root-owned; the pod's fsGroup (core/job_pods.py) makes the kubelet
                    # add group read for that group alone (0440 root:1000), so the Job's user
                    # reads it and no other uid could ("might be in conflict with ... fsGroup, and
                    # the result can be other mode bits set": the Secret volume's defaultMode,
                    # https://kubernetes.io/docs/reference/kubernetes-api/config-and-storage-resources/volume/#projections).
                    "defaultMode": TOKEN_MODE,
                },
            }
        )
    identity = _identity(c)
    return Desired(
        JOB_TYPE,
        resource,
        (CHECKPOINT_STAGING,),
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"stage-checkpoint-{identity}",
                "namespace": NAMESPACE,
                "labels": {CHECKPOINT_LABEL: identity},
            },
            "spec": {
                "backoffLimit": 3,  # a rerun resumes: only what is missing or wrong is sent
                "template": {
                    "spec": {
                        "serviceAccountName": SERVICE_ACCOUNT,
                        # The program calls S3 and the Hub, never the Kubernetes API. IRSA's
                        # webhook still mounts its own projected web identity token
                        # (aws-iam-token) whatever this says (core/job_pods.py no_api_token).
                        **no_api_token(),
                        "restartPolicy": "Never",
                        "nodeSelector": role_node_selector("system"),
                        "securityContext": pod_security_context(),
                        "containers": [
                            {
                                "name": "stage",
                                "image": s.jobs.image,
                                "command": ["/bin/sh", "-c", script],
                                "securityContext": container_security_context(read_only_root=True),
                                "env": env,
                                "resources": {
                                    "requests": {
                                        "cpu": str(JOB_CPU_REQUEST),
                                        "memory": f"{JOB_MEMORY_REQUEST_GIB}Gi",
                                        "ephemeral-storage": SCRATCH_LIMIT,
                                    },
                                    "limits": {
                                        "memory": f"{JOB_MEMORY_LIMIT_GIB}Gi",
                                        "ephemeral-storage": "60Gi",
                                    },
                                },
                                "volumeMounts": mounts,
                            }
                        ],
                        "volumes": volumes,
                    }
                },
            },
        },
    )
