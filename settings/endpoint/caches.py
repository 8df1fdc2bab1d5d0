"""The operator's model caches of an endpoint (weights on the nodes' NVMe, pre-pulled image)."""

from __future__ import annotations

from pydantic import Field

from settings.config.fields import (
    SettingsModel,
)


class CacheConfig(SettingsModel):
    """The operator's model caches (spec.modelCacheConfig, operator 3.3 and newer: AWS model
    caching page, sagemaker-hyperpod-model-deployment-model-caching).

    Nothing more is rendered to warm nodes before a first pod (core/cold_start.py, "Which
    start"): the operator warms its own per-deployment cache beside the pods, not before them;
    a standalone ModelWeightsCacheConfig has a cache directory and node label of its own that
    no IEC field points to; modelSourceConfig.prefetchEnabled copies the weights from the same
    S3 mount into RAM before the worker starts, which adds a step rather than removing one."""

    weights: bool = Field(
        False,
        description="Operator >= 3.3: keep the staged weights on the nodes' instance-store NVMe "
        "(modelCacheConfig.weightsCache, at /opt/dlami/nvme): a new pod on a warm node reads "
        "them locally instead of from S3. Needs an instance type with NVMe instance store, big "
        "enough for every cached endpoint that may run on it (each keeps its own directory).",
    )
    image: bool = Field(
        False,
        description="Operator >= 3.3: pre-pull the worker image on the pools' nodes "
        "(modelCacheConfig.imageCache), so a new pod skips the image pull.",
    )
