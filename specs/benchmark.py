"""What an in-cluster benchmark run may do, created by `pulumi up` so a run needs no AWS admin.

`hyperpod-dpd benchmark run --stack S` (without --target) starts a Kubernetes Job in the
stack's benchmark namespace (hyperpod_dpd/benchmark/job.py renders it). The Job runs as the
service account declared here, whose IRSA role can read the tokenizer files of each checkpoint
copy the stack stages (an endpoint with its own `checkpoint` loads another model or revision,
and a run reads the tokenizer of the endpoint it loads), by exact key, and write under the
bucket's `benchmarks/` prefix; nothing else.

The namespace is the stack's own (core/vocabulary.py BENCHMARK_NAMESPACE), not an endpoint's:
only the operator's pods run there (specs/isolation/admission.py), and a run reaches an endpoint
through its router's Service like any client. It enforces Pod Security `restricted`, which the
run's pod meets (core/job_pods.py), its pods cannot reach the instance metadata service
(specs/isolation/instance_metadata.py), and only the admins' Jobs run there: whoever runs a pod
there acts as this role (specs/isolation/admission.py STACK_PODS).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.refs import ref
from core.vocabulary import BENCHMARK_ACCESS, BENCHMARK_NAMESPACE
from settings.stack import StackSettings
from specs.base import Desired
from specs.iam import allow, role_policy
from specs.isolation.instance_metadata import guarded_namespace
from specs.isolation.pod_security import namespace_desired

NAMESPACE = BENCHMARK_NAMESPACE
SERVICE_ACCOUNT = "benchmark-runner"
RESULTS_PREFIX = "benchmarks"  # s3://<model bucket>/benchmarks/<run id>/
# What a Hugging Face tokenizer loads from a model's directory (transformers' AutoTokenizer:
# the fast tokenizer, its config and special tokens; config.json names the model type when the
# tokenizer config does not; tokenizer.model for SentencePiece models). The run copies those the
# checkpoint has; the weights are never read.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "tokenizer.model",
    "config.json",
)


@dataclass(frozen=True)
class BenchmarkAccessSpec:
    name: str
    namespace: str  # where the service account and the runs' Jobs live
    service_account: str
    tokenizer_prefix: str  # the first endpoint's staged copy: where a run of it reads the tokenizer
    policy: Desired  # the runner role's inline policy
    namespace_resource: Desired  # the Namespace, `restricted`
    # Keeps the runs' pods from the instance metadata service; None: networkPolicy.enabled false.
    metadata_policy: Desired | None = None


def results_prefix(run_id: str) -> str:
    return f"{RESULTS_PREFIX}/{run_id}"


def benchmark_access(name: str, s: StackSettings, model_bucket_arn: str) -> BenchmarkAccessSpec:
    """`model_bucket_arn` is a placeholder (the bucket's ARN is known after it is created). With
    one endpoint's view of the stack (hyperpod_dpd/shared/endpoints.py single_view), the
    tokenizer prefix is that endpoint's own copy."""
    prefix = s.checkpoint_of(s.entries()[0]).effective_prefix
    copies = [c.effective_prefix for c in s.staged_checkpoints()]
    policy = role_policy(
        f"{name}-policy",
        (BENCHMARK_ACCESS,),
        ref(f"{name}-role", "id"),
        allow(
            ["s3:GetObject"],
            [f"{model_bucket_arn}/{p}/{f}" for p in copies for f in TOKENIZER_FILES],
            "ReadTokenizer",
        ),
        # Only new objects under benchmarks/: a run never reads, lists or deletes another's.
        # (PutObject covers multipart uploads, which boto3 uses above 8 MB; aborting a failed one
        # is its own action.)
        allow(
            ["s3:PutObject", "s3:AbortMultipartUpload"],
            [f"{model_bucket_arn}/{RESULTS_PREFIX}/*"],
            "WriteResults",
        ),
    )
    parents = (BENCHMARK_ACCESS,)
    namespace = namespace_desired(
        f"{name}-namespace", parents, NAMESPACE, "restricted", s.eks.kubernetes_version
    )
    egress = guarded_namespace(s, f"{name}-metadata-egress", parents, NAMESPACE)
    return BenchmarkAccessSpec(name, NAMESPACE, SERVICE_ACCOUNT, prefix, policy, namespace, egress)
