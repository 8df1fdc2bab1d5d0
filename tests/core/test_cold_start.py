"""The cold-start estimate (core/cold_start.py): the cited figures come back out of it, and each
cache takes away its own phase."""

from __future__ import annotations

import pytest

from core.aws.ec2_instances import INSTANCE_FACTS
from core.cold_start import GB, cold_start

P5 = INSTANCE_FACTS["ml.p5.48xlarge"]
LLAMA_70B = 141 * GB


def test_a_70b_from_s3_on_a_p5_takes_the_documented_5_to_10_minutes():
    c = cold_start(LLAMA_70B, 8, P5.network_gbps)
    assert c.weights_read == pytest.approx(600)  # the slow end of 5-10 minutes
    assert c.image_pull == pytest.approx(267)  # what caching the image saved (AWS blog)
    assert 5 * 60 <= c.weights_read + c.load_to_gpu <= 10 * 60 + 5
    assert c.total == pytest.approx(600 + 267 + 141 / 8 / 64 + 18.12, abs=0.5)


def test_the_weights_cache_reads_from_nvme_and_the_image_cache_skips_the_pull():
    off = cold_start(LLAMA_70B, 8, P5.network_gbps)
    on = cold_start(LLAMA_70B, 8, P5.network_gbps, weights_cached=True, image_cached=True)
    assert on.image_pull == 0 and off.image_pull > 200
    assert on.weights_read == pytest.approx(141 / 3.52, rel=0.01)  # about 40 s from NVMe
    assert (on.load_to_gpu, on.warm_up) == (off.load_to_gpu, off.warm_up)
    assert on.total < off.total / 5


def test_a_slow_network_bounds_the_reads():
    # 1 Gbit/s (125 MB/s): slower than the S3 figure (235 MB/s), so the network decides; the
    # image's 66 MB/s is slower still, so its pull keeps its time.
    slow = cold_start(LLAMA_70B, 1, 1.0)
    assert slow.weights_read == pytest.approx(141 * GB / (GB / 8))
    assert slow.image_pull == pytest.approx(267)
    assert cold_start(LLAMA_70B, 1, 0.25).image_pull == pytest.approx(17.7 * GB / (GB / 32))
    assert slow.to_json()["total"] == round(slow.total)
