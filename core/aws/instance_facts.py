"""The type of core/aws/ec2_instances.py's INSTANCE_FACTS: what EC2's DescribeInstanceTypes says of an
instance type, the few numbers the settings' capacity checks need (core/sizing/node_capacity.py), what a
GPU worker is sized with on any GPU type (core/sizing/gpu_types.py) and what its cold start reads
through (core/cold_start.py). Hand-written; the table
itself is generated (scripts/extract_aws_facts.py)."""

from __future__ import annotations

from typing import NamedTuple


class InstanceFacts(NamedTuple):
    vcpus: int  # VCpuInfo.DefaultVCpus
    memory_mib: int  # MemoryInfo.SizeInMiB: nominal, a little above what the kernel reports
    max_enis: int  # NetworkInfo.MaximumNetworkInterfaces, over every network card
    default_card_enis: int  # NetworkCards[DefaultNetworkCardIndex].MaximumNetworkInterfaces
    ipv4_per_eni: int  # NetworkInfo.Ipv4AddressesPerInterface (the interface's primary included)
    efa_interfaces: int  # NetworkInfo.EfaInfo.MaximumEfaInterfaces; 0 without EFA
    x86_64: bool  # "x86_64" in ProcessorInfo.SupportedArchitectures
    # NetworkCards[DefaultNetworkCardIndex].BaselineBandwidthInGbps: what the node's primary
    # interface sustains (its S3 and registry traffic; EFA's cards carry the KV transfers).
    network_gbps: float
    # InstanceStorageInfo: TotalSizeInGB of the instance-store disks (0: EBS only) and whether
    # they are NVMe (NvmeSupport "required" or "supported"). The operator's weights cache lives
    # there (AWS model-caching page: "EBS-only instances are not supported").
    instance_store_gb: int
    instance_store_nvme: bool
    # GpuInfo.Gpus (NVIDIA ones: the workers request nvidia.com/gpu). Types without GPUs leave
    # these at their defaults, and the generated table leaves them out.
    gpu_count: int = 0  # Count
    gpu_memory_mib: int = 0  # MemoryInfo.SizeInMiB, per GPU
    gpu_model: str = ""  # Name, e.g. "A10G"
