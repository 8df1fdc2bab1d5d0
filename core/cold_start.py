"""How long a new worker takes from scheduled to ready, by phase, caches off and on: the
estimate the plan shows per endpoint and pool (summary.md, plan.json) and the advisory on an
autoscaled pool that starts slower than its scale-up can wait (policies/rules/cold_start.py).

An estimate from published figures, each cited, scaled by the node's own EC2 numbers
(core/aws/ec2_instances.py: the primary interface's baseline bandwidth):

- Image pull. A vLLM server image is 17.7 GB compressed (the SageMaker LMI image), and caching
  it cut a scale-out from 525 s to 258 s (AWS ML blog, "Supercharge your auto scaling for
  generative AI inference: Introducing Container Caching in SageMaker Inference",
  https://aws.amazon.com/blogs/machine-learning/supercharge-your-auto-scaling-for-generative-ai-inference-introducing-container-caching-in-sagemaker-inference/):
  267 s for 17.7 GB, about 66 MB/s pulled and unpacked. With the operator's image cache
  (modelCacheConfig.imageCache) the image is on the node before the pod: no pull.
- Weights read. With an S3 model source the operator mounts the bucket through the Mountpoint
  S3 CSI driver and vLLM reads the safetensors through it. A 70B model (141 GB) takes 5-10
  minutes from a cold S3 fetch (AWS DPD troubleshooting, "Pod startup issues",
  https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-ts-dpd.html):
  141 GB in 600 s, the slow end, is 235 MB/s; never faster than the node's network. With the
  weights cache the node's NVMe instance store serves them: the safetensors loader reads
  26.4 GB/s / 7.5 = 3.5 GB/s from NVMe (fastsafetensors, arXiv 2505.23072: up to 26.4 GB/s,
  4.8-7.5x the safetensors baseline). On a node not warm yet the read is S3's: the cache
  helps a node that has the files (the AWS model caching page).
- Load to GPU. Each rank copies its shard host to device over PCIe Gen5 x16: 64 GB/s one
  way (NVIDIA H100 datasheet: 128 GB/s PCIe Gen5, both ways), ranks in parallel.
- Warm-up. vLLM's engine start after the weights (memory profiling, KV cache allocation, CUDA
  graphs): 23 s ready from S3 minus 4.88 s of loading for Llama-3-8B (run-ai/runai-model-
  streamer docs/src/benchmarks.md), about 18 s; a lower bound for larger models.

Which start. The caches-off figures are the FIRST worker's on a node whose caches are not warm
(a new endpoint, a new revision, a replaced node): a cache miss that reads S3 and pulls the
image. The caches-on figures are a LATER worker's on a node the operator has warmed. The
operator does not hold the first pods for the cache (AWS model caching page,
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-model-caching.html):
it warms the nodes matching the deployment's scheduling constraints and labels each warm one
(inference.sagemaker.aws.amazon.com/weights-cache-ready.<the cache configuration's UID>); the
pods prefer those nodes (preferred affinity) but schedule anywhere, and "if a pod is scheduled
on a node where the cache is not yet available, the deployment falls back to loading model
weights directly from the remote model source"; a replaced node is warmed again before pods
prefer it. The image cache pre-pulls beside the pods the same way. So a scale-out onto an idle
node the operator has already warmed is a cache hit; the first start never is.

Nothing this project could render shortens the first start (what the public sources say):
- A standalone ModelWeightsCacheConfig (CRD inference.sagemaker.aws.amazon.com_
  modelweightscacheconfigs.yaml in aws/sagemaker-hyperpod-cli's inference-operator chart at
  commit 0986f2cc4eb14070d3aeb159c2c9b09d1b5f287b:
  modelSourceConfig, hostPath, nodeSelector, nodeAffinity; status readyNodes/targetNodes)
  warms a cache of its own: the AWS page says each deployment uses an isolated per-deployment
  cache directory and each cache-ready label carries its cache configuration's UID, and the
  IEC's spec.modelCacheConfig.weightsCache has only `enabled` and `hostPath`, no reference to
  another configuration. Nothing public says an IEC's pods read another configuration's cache.
- modelSourceConfig.prefetchEnabled (the CRD: "pre-fetch the model to RAM and then the
  inference server will load to the GPU/CPU device thereafter") makes the operator mount the
  S3 volume plus a RAM-backed emptyDir, model-weights-copy, that the worker reads from (AWS
  "Deploy models from local NVMe storage using kubectl",
  https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-deploy-nvme.html).
  From S3 the same 141 GB still cross the same mount first, then RAM, before vLLM starts; the
  copy is the whole checkpoint per pod (TP ranks share the pod, not the copy), charged to the
  pod's memory (a memory-backed emptyDir counts against the container's memory limit,
  https://kubernetes.io/docs/concepts/storage/volumes/#emptydir). It fits a p5's 2 TiB but no
  public figure shows it faster than vLLM reading the mount; AWS pairs it with a custom
  initContainer copying from NVMe, which is the weights cache's job here.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.sizing.catalog import SizingError, load_model
from core.sizing.gpu_memory import weights_bytes_per_rank

GB = 10**9
IMAGE_BYTES = int(17.7 * GB)  # the vLLM server image, compressed (AWS container caching blog)
IMAGE_PULL_BYTES_PER_S = IMAGE_BYTES / (525 - 258)  # 267 s saved by caching it
S3_READ_BYTES_PER_S = 141 * GB / 600  # 70B from a cold S3 fetch in at most 10 minutes
NVME_READ_BYTES_PER_S = 26.4 * GB / 7.5  # fastsafetensors' NVMe peak / its best speed-up
PCIE_BYTES_PER_S = 64 * GB  # PCIe Gen5 x16, one way
WARM_UP_SECONDS = 23 - 4.88  # runai-model-streamer: vLLM ready 23 s, of which 4.88 s loading
PHASES = ("image pull", "weights read", "load to GPU", "warm-up")


def checkpoint_bytes(model_name: str) -> int | None:
    """The staged weights of the endpoint's model (every rank's share: the whole checkpoint);
    None when the model is unknown (check_sizing_inputs reports it)."""
    try:
        return weights_bytes_per_rank(load_model(model_name), 1)
    except SizingError:
        return None


@dataclass(frozen=True)
class ColdStart:
    """Seconds per phase (PHASES' order) of one pool's new worker."""

    image_pull: float
    weights_read: float
    load_to_gpu: float
    warm_up: float

    @property
    def total(self) -> float:
        return self.image_pull + self.weights_read + self.load_to_gpu + self.warm_up

    def to_json(self) -> dict[str, int]:
        """Whole seconds, per phase and in total."""
        return {
            "imagePull": round(self.image_pull),
            "weightsRead": round(self.weights_read),
            "loadToGpu": round(self.load_to_gpu),
            "warmUp": round(self.warm_up),
            "total": round(self.total),
        }


def cold_start(
    checkpoint_bytes: int,
    tensor_parallel_size: int,
    network_gbps: float,
    *,
    weights_cached: bool = False,
    image_cached: bool = False,
) -> ColdStart:
    """A new worker of a model of `checkpoint_bytes`, sharded over `tensor_parallel_size` GPUs,
    on a node whose primary interface sustains `network_gbps`."""
    network = network_gbps * GB / 8
    read_rate = NVME_READ_BYTES_PER_S if weights_cached else min(S3_READ_BYTES_PER_S, network)
    return ColdStart(
        image_pull=0.0 if image_cached else IMAGE_BYTES / min(IMAGE_PULL_BYTES_PER_S, network),
        weights_read=checkpoint_bytes / read_rate,
        load_to_gpu=checkpoint_bytes / max(tensor_parallel_size, 1) / PCIE_BYTES_PER_S,
        warm_up=WARM_UP_SECONDS,
    )
