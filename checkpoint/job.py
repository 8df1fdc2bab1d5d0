"""What the stack's in-cluster staging Job runs, in one place.

The Job's container needs this repository's `workloads` and `infra` packages plus boto3[crt]
and huggingface_hub (requirements.txt), an IAM role for its service account (IRSA or EKS Pod
Identity) with write access to the model bucket, and, for gated models, HF_TOKEN from a
Kubernetes Secret (`pulumi config set --secret hyperpod-dpd:hfToken ...`). Hub files are
staged one at a time under --tmp-dir: mount an emptyDir there and pass its sizeLimit as
--tmp-limit so that the pod is never evicted for using more ephemeral storage.
"""

from __future__ import annotations

from checkpoint.sources.hf import COMMIT_SHA

# Environment of the Job's container (values: what to set them from).
JOB_ENV = {
    "HF_TOKEN": "the hfToken secret (Kubernetes Secret key); only needed for gated/private models",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_XET_HIGH_PERFORMANCE": "1 (Xet-backed repos download with more parallelism)",
    "HF_XET_CHUNK_CACHE_SIZE_BYTES": "0 (no second copy of the weights in Xet's chunk cache)",
    "AWS_REGION": "the cluster's Region (IRSA/Pod Identity inject the credentials)",
}


def staging_prefix(repo_id: str, revision: str, root: str = "models") -> str:
    """The prefix a Hub model is staged under: one per commit, never overwritten by another.

    >>> staging_prefix("meta-llama/Llama-3.3-70B-Instruct", "a" * 40)
    'models/meta-llama/Llama-3.3-70B-Instruct/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
    """
    if not COMMIT_SHA.match(revision):
        raise ValueError(f"revision must be a 40-hex commit SHA, not {revision!r}")
    return f"{root.strip('/')}/{repo_id}/{revision}"


def job_command(
    *,
    source: str,
    dest: str,
    region: str,
    revision: str | None = None,
    tmp_dir: str = "/scratch",
    tmp_limit: str | None = None,
    concurrency: int = 16,
    exclude: tuple[str, ...] = (),
) -> list[str]:
    """The container command of the staging Job (the image's `python` with this repo on its path).

    >>> job_command(source="hf://org/m", dest="s3://b/models/org/m/" + "a" * 40,
    ...             revision="a" * 40, region="us-east-2", tmp_limit="200GiB")[:4]
    ['python', '-m', 'checkpoint', 'upload']
    """
    cmd = [
        "python",
        "-m",
        "checkpoint",
        "upload",
        "--source",
        source,
        "--dest",
        dest,
        "--region",
        region,
        "--tmp-dir",
        tmp_dir,
        "--concurrency",
        str(concurrency),
        "--progress",
        "plain",
        "--progress-interval",
        "30",
    ]
    if revision:
        cmd += ["--revision", revision]
    if tmp_limit:
        cmd += ["--tmp-limit", tmp_limit]  # e.g. "200GiB": the emptyDir's sizeLimit
    for pattern in exclude:
        cmd += ["--exclude", pattern]
    return cmd
