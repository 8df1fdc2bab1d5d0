"""Pinned versions of what the stack installs, with where each pin comes from.

Re-check a pin with the command in its comment before raising it.
"""

from __future__ import annotations

from dataclasses import dataclass

# EKS core add-ons per Kubernetes minor version. Check with:
#   aws eks describe-addon-versions --kubernetes-version 1.33 --addon-name <name> \
#     --query 'addons[].addonVersions[].addonVersion'
# 1.33 pins: versions published for 1.33 and used in public EKS 1.33 configurations (2025-07 to
# 2025-10): vpc-cni v1.19.5-eksbuild.1, coredns v1.12.1-eksbuild.2, kube-proxy
# v1.33.0-eksbuild.2, eks-pod-identity-agent v1.3.8-eksbuild.2. Kubernetes 1.34 is not offered:
# the HyperPod dependencies chart's mpi-operator CRD fails on >= 1.34 (alchemy-run/alchemy
# `examples/aws-hyperpod`).
EKS_ADDON_VERSIONS: dict[str, dict[str, str]] = {
    "1.33": {
        "vpc-cni": "v1.19.5-eksbuild.1",
        "kube-proxy": "v1.33.0-eksbuild.2",
        "eks-pod-identity-agent": "v1.3.8-eksbuild.2",
        "coredns": "v1.12.1-eksbuild.2",
    },
}
SUPPORTED_KUBERNETES_VERSIONS = tuple(sorted(EKS_ADDON_VERSIONS))

# The CodeBuild runner's image (hyperpod-dpd:ci.runner codebuild): CodeBuild's curated Ubuntu
# 22.04 image, standard 7.0 (CodeBuild user guide, "Docker images provided by CodeBuild",
# https://docs.aws.amazon.com/codebuild/latest/userguide/build-env-ref-available.html). Ubuntu,
# so actions/setup-python's Ubuntu builds of CPython install on it as on ubuntu-latest. AWS
# patches a curated image in place under its major version: it cannot be pinned by digest
# (CodeBuild pulls it from its own cache), only by that version.
CODEBUILD_RUNNER_IMAGE = "aws/codebuild/standard:7.0"


@dataclass(frozen=True)
class GitHubChart:
    """A Helm chart inside a GitHub repository, pinned to a commit (content-addressed)."""

    repo: str
    commit: str
    path: str

    @property
    def archive_path(self) -> str:
        return f"{self.repo}/tar.gz/{self.commit}"


# The "HyperPod dependencies" umbrella chart (aws/sagemaker-hyperpod-cli helm_chart/readme.md):
# health-monitoring agent, deep health check, NVIDIA device plugin 0.16.1, EFA device plugin
# 0.5.20, training and MPI operators. Not published to a Helm repository: `hyperpod-dpd fetch`
# downloads this commit into .hyperpod-dpd/ (never committed here). Commit from its history
# (Chart.yaml with hyperpod-inference-operator 2.6.1 as an optional, disabled subchart).
HYPERPOD_DEPENDENCIES_CHART = GitHubChart(
    repo="aws/sagemaker-hyperpod-cli",
    commit="067d658b2d5c3d347afbadd75e1425214e965dcb",
    path="helm_chart/HyperPodHelmChart",
)


# HyperPod Inference Operator versions and the amazon-sagemaker-hyperpod-inference EKS add-on
# version that carries each (AWS docs: DPD page "--addon-version v1.3.0-eksbuild.1" for 3.2;
# release notes for 3.3 and 3.4). DPD (pdSpec) needs 3.2 or newer.
DPD_MINIMUM_OPERATOR = (3, 2)
# spec.modelCacheConfig (weightsCache, imageCache) arrived with 3.3 (its CRD, specs/schema/
# inferenceendpointconfig-v3.3.json; AWS docs, sagemaker-hyperpod-model-deployment-model-caching).
MODEL_CACHE_MINIMUM_OPERATOR = (3, 3)
OPERATOR_ADDON_VERSIONS: dict[str, str] = {
    # 3.1: colocated endpoints only (caching and routing docs: add-on v1.2.1 for >= 3.1.3).
    "3.1": "v1.2.1-eksbuild.1",
    "3.2": "v1.3.0-eksbuild.1",
    "3.3": "v1.4.0-eksbuild.1",
    "3.4": "v1.5.0-eksbuild.1",
}
# Add-ons the operator's manager needs before it starts (its init container check-csi-drivers
# checks the S3 and FSx CSI drivers and the cert-manager CRDs: aws/sagemaker-hyperpod-cli, the
# inference-operator chart's `config/manager/manager.yaml`); minimum versions from the AWS setup
# docs, pinned at those versions.
OPERATOR_DEPENDENCY_ADDONS: dict[str, str] = {
    "aws-mountpoint-s3-csi-driver": "v1.14.1-eksbuild.1",
    "aws-fsx-csi-driver": "v1.6.0-eksbuild.1",
    "metrics-server": "v0.7.2-eksbuild.4",
    "cert-manager": "v1.18.2-eksbuild.2",
}
# amazon-sagemaker-hyperpod-observability; v1.0.5 adds the restricted-instance-group toleration.
OBSERVABILITY_ADDON_VERSION = "v1.0.5-eksbuild.1"


@dataclass(frozen=True)
class GitHubFile:
    """One file of a GitHub repository at a pinned commit (`ref`; the tag it was read from, for
    readers, in `tag`), with the sha256 of its bytes there: the copy vendored in this repository
    must have exactly these bytes, so a moved tag or an edited copy never reaches an IAM policy."""

    repo: str
    ref: str
    path: str
    sha256: str | None = None
    tag: str | None = None


# The AWS Load Balancer Controller's IAM policy, at the controller version the inference
# operator's chart installs (v2.13.x; the AWS setup docs point at v2.13.0 of this file). The tag
# v2.13.0 (annotated) points at commit 73980cf11d1c79c310f4f14a089554f58b165d7d; the file there is
# 8955 bytes with this sha256 (read from the repository's git objects, `git rev-parse
# v2.13.0^{commit}` and `git show <commit>:docs/install/iam_policy.json | sha256sum`). Vendored
# byte for byte as specs/alb_controller/iam_policy.json (specs/alb_controller/upstream.py refuses
# other bytes) and narrowed by specs/alb_controller/narrowing.py; raising the pin means vendoring
# the new file and reviewing the narrowing against it.
ALB_CONTROLLER_POLICY = GitHubFile(
    repo="kubernetes-sigs/aws-load-balancer-controller",
    ref="73980cf11d1c79c310f4f14a089554f58b165d7d",
    path="docs/install/iam_policy.json",
    sha256="16f232c9d9f79366fe949c4550ad517a202380058a9e48d45a4e215044a20a6a",
    tag="v2.13.0",
)


# The two worker images the AWS DPD docs support (sagemaker-hyperpod-model-deployment-dpd,
# prerequisites): the HyperPod vLLM DLC, the
# endpoint's default, and LMCache's vLLM image at the release the DLC's own pin names.
DLC_VLLM_IMAGE = "public.ecr.aws/deep-learning-containers/vllm:server-hyperpod-cuda-v1.1"
LMCACHE_VLLM_IMAGE = "lmcache/vllm-openai:v0.4.3"
DPD_IMAGES = (DLC_VLLM_IMAGE, LMCACHE_VLLM_IMAGE)
# The vLLM both images carry. AWS DPD docs (sagemaker-hyperpod-model-deployment-dpd.html,
# Prerequisites): "Both images include LMCache 0.4.3, vLLM 0.19.0, and NIXL 1.0.0." Its flags are
# in core/vllm/vllm_flags.json, extracted from vLLM's source by scripts/extract_vllm_args.py.
WORKER_VLLM_VERSION = "0.19.0"

# The one-shot pod `hyperpod-dpd verify` sends its prompts from (inside the cluster, to the
# router's ClusterIP service): curl's official image, the release tag on Docker Hub.
VERIFY_CURL_IMAGE = "curlimages/curl:8.11.1"

# The in-cluster Jobs (checkpoint staging, benchmark runs): a stock Python on Docker Hub's
# official image, through its public ECR mirror (no Docker Hub rate limit from the cluster); the
# minor matches the project's Python (pyproject.toml requires-python). Each Job pip-installs its
# few pinned packages on start, with the same pins as requirements.txt.
JOB_PYTHON_IMAGE = "public.ecr.aws/docker/library/python:3.11-slim-bookworm"
JOB_BOTO3 = "boto3[crt]==1.44.8"  # requirements.txt

# HyperPod AMI release (instanceGroups.<name>.imageReleaseVersion) is not pinned here: no public
# source lists the released MAJOR.MINOR.PATCH versions (the CloudFormation schema documents the
# field and its format only), and a guessed version would fail CreateCluster. Unset, HyperPod
# uses the newest at creation and keeps it (no AutoPatchConfig: see specs/hyperpod.py); a stack
# pins the version it validated by setting the key.


# Worker images known to break DPD, by the image reference (repository:tag) pattern, with the
# report behind each. The default DLC image installs `nixl>=1.0.1` unpinned, so its NIXL
# version is not in its name: `hyperpod-dpd verify` measures the transfer itself.
KNOWN_BAD_IMAGES: tuple[tuple[str, str], ...] = (
    (
        r"^lmcache/vllm-openai:v?0\.4\.4(\D|$)",
        "LMCache 0.4.4 regressed on HyperPod (aws/deep-learning-containers PR #6094 pins 0.4.3: "
        '"0.4.4 introduced a regression on HyperPod")',
    ),
    (
        r"nixl[-_.]?v?1\.2\.0(\D|$)",
        "NIXL 1.2.0's LIBFABRIC GPU path breaks prefill-to-decode KV transfer over EFA "
        "(awslabs/awsome-distributed-ai PR #1128: ~256 s for 4 tokens, timeouts)",
    ),
)
