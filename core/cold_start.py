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
