"""A layout's autoscaling from the pools' capacities (hyperpod_dpd/advise/scaling.py): replicas
within the nodes, the follower of a pair at its share of one leader replica, "no room to scale"
said when the bounds meet, and the keys --write sets (camelCase, a ratio only for both pools)."""

from __future__ import annotations

from hyperpod_dpd.advise.capacity import PoolCapacity
from hyperpod_dpd.advise.scaling import ratio_of, scaling
from hyperpod_dpd.advise.search import Layout
from hyperpod_dpd.advise.workload import workload
from settings.endpoint.scaling_pair import floor_of

PREFILL = PoolCapacity("prefill", "prompt-tokens-per-second", 18400.0, 18400.0,
                       "TTFT p50 <= 500 ms", 24100.0, requests_per_second=4.5)  # fmt: skip
DECODE = PoolCapacity("decode", "running-requests", 29.0, 26.0, "TPOT p50 <= 15 ms", 32.0)
WITHIN = "ISL 4096 / OSL 256; concurrency 8, 16, 32 (aisimulate 0.13.0)"


def test_the_ratio_is_the_layouts_in_lowest_terms():
    assert (
        ratio_of(Layout("dpd", 2, 8, 4, 8)).prefill,
        ratio_of(Layout("dpd", 2, 8, 4, 8)).decode,
    ) == (1, 2)
    assert ratio_of(Layout("dpd", 3, 8, 2, 8)).follower == "prefill"


def test_a_layout_sized_by_advise_scales_within_its_own_nodes_the_follower_at_its_share():
    s = scaling(Layout("dpd", 2, 8, 4, 8), {"prefill": PREFILL, "decode": DECODE}, None, WITHIN)
    assert s.bounds == {"prefill": (1, 2), "decode": (2, 4)}  # decode: 2 per prefill replica
    assert (s.ratio.prefill, s.ratio.decode, s.ratio.follower) == (1, 2, "decode")
    assert s.room
    keys = s.config_keys()
    assert keys["ratio"] == {"prefill": 1, "decode": 2}
    assert keys["decode"] == {
        "minReplicas": 2, "maxReplicas": 4, "metric": "running-requests", "query": None,
        "target": 26.0,
        "capacity": {"metric": "running-requests", "perReplica": 29.0,
                     "within": f"TPOT p50 <= 15 ms at {WITHIN}"},
    }  # fmt: skip
    assert keys["maxReplicas"] is None  # a DPD endpoint has no colocated bounds


def test_one_node_a_pool_leaves_no_room_to_scale_and_says_so():
    s = scaling(Layout("dpd", 1, 8, 1, 8), {"prefill": PREFILL, "decode": DECODE}, None, WITHIN)
    assert s.bounds == {"prefill": (1, 1), "decode": (1, 1)} and not s.room
    assert any(n.startswith("no room to scale: the layout's nodes hold ") for n in s.notes)
    doc = s.as_json(workload(4096, 256, None, [8], None, 500, 15, 131072, "ctx"))
    assert doc["roomToScale"] is False and doc["percentile"] == "p50"
    assert set(doc["decode"]) == {"metric", "target", "capacity", "limit", "minReplicas",
                                  "maxReplicas", "scaleDownStabilizationSeconds"}  # fmt: skip
    assert doc["decode"]["scaleDownStabilizationSeconds"] == 300  # no start known: the default
    assert doc["prefill"]["requestsPerSecond"] == 4.5


def test_a_shared_groups_room_caps_the_leader_at_what_the_follower_can_follow():
    """1:2, room for 3 prefill but 4 decode: prefill at most 2 (4 decode follow 2 prefill)."""
    room = {"prefill": 3, "decode": 4, "colocated": 0}
    s = scaling(Layout("dpd", 1, 8, 2, 8), {"prefill": PREFILL, "decode": DECODE}, room, WITHIN)
    assert s.bounds == {"prefill": (1, 2), "decode": (2, 4)}
    assert "prefill at most 2: decode's 4 nodes follow no more" in s.notes


def test_an_endpoints_entry_scales_within_at_least_its_layouts_nodes():
    """2P1D where the groups leave the entry 1 prefill node: prefill still gets its 2 (advise
    grows the group), so the ratio's floor (2 prefill per decode replica) fits its maximum."""
    room = {"prefill": 1, "decode": 1, "colocated": 0}
    s = scaling(Layout("dpd", 2, 8, 1, 8), {"prefill": PREFILL, "decode": DECODE}, room, WITHIN)
    assert s.bounds == {"prefill": (2, 2), "decode": (1, 1)}
    assert floor_of(s.ratio, s.bounds["decode"][1]) <= s.bounds["prefill"][1]


def test_one_pool_with_a_target_is_written_alone_without_a_ratio():
    missed = PoolCapacity("prefill", "prompt-tokens-per-second", None, None, "TTFT p50 <= 50 ms",
                          why="one request alone takes 190 ms to its first token")  # fmt: skip
    s = scaling(Layout("dpd", 1, 8, 1, 8), {"prefill": missed, "decode": DECODE}, None, WITHIN)
    assert set(s.pools) == {"decode"} and s.ratio is None
    assert s.config_keys()["ratio"] is None and "prefill" not in s.config_keys()
    assert "prefill: no target: TTFT p50 <= 50 ms not held (one request alone" in s.notes[0]


def test_a_colocated_layout_scales_its_one_pool():
    pool = PoolCapacity("colocated", "running-requests", 7.0, 7.0, "TTFT p50 <= 500 ms", 32.0)
    s = scaling(Layout("colocated", 3, 8), {"colocated": pool}, None, WITHIN)
    keys = s.config_keys()
    assert (keys["minReplicas"], keys["maxReplicas"], keys["target"]) == (1, 3, 7.0)
    assert keys["prefill"] is None and keys["decode"] is None and keys["ratio"] is None
    assert scaling(Layout("colocated", 3, 8), {}, None, WITHIN) is None


def test_scale_in_waits_for_a_new_workers_start_in_whole_minutes_at_most_an_hour():
    """A 70B on p5 from S3 without caches: about 886 s to start, so 900; with both caches the
    default 300; a 405B's start is past the HPA's most (3600), which is said."""
    from hyperpod_dpd.advise.scaling import Start

    layout = Layout("dpd", 1, 8, 1, 8)
    cold = scaling(
        layout, {"decode": DECODE}, None, WITHIN, Start("llama-3.3-70b", "ml.p5.48xlarge")
    )
    assert cold.holds == {"decode": 900}
    assert cold.config_keys()["decode"]["scaleDownStabilizationSeconds"] == 900
    warm = Start("llama-3.3-70b", "ml.p5.48xlarge", weights_cached=True, image_cached=True)
    cached = scaling(layout, {"decode": DECODE}, None, WITHIN, warm)
    assert cached.holds == {"decode": 300}
    assert "scaleDownStabilizationSeconds" not in cached.config_keys()["decode"]
    huge = scaling(
        layout, {"decode": DECODE}, None, WITHIN, Start("llama-3.1-405b", "ml.p5.48xlarge")
    )
    assert huge.holds == {"decode": 3600}
    assert any("takes over 3600 s to start" in n for n in huge.notes)
