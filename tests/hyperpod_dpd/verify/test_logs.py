"""The log parsers on the lines the AWS DPD guide prints (verifying the deployment, KV transfer)."""

from __future__ import annotations

import pytest

from hyperpod_dpd.verify import logs

DOCS_RETRIEVED = (
    "[Worker_TP5] [LMCache INFO] [req_id=cmpl-...] Retrieved 6035 out of 6035 required tokens "
    "(from 6035 total tokens). size: 0.2344 gb, cost 1.3304 ms, throughput: 176.1686 GB/s"
)


def test_retrieved_line_of_the_docs():
    r = logs.parse_retrieval(DOCS_RETRIEVED)
    assert r == logs.KvRetrieval(
        retrieved=6035,
        required=6035,
        total=6035,
        size_gb=0.2344,
        cost_ms=1.3304,
        throughput_gbps=176.1686,
        req_id="cmpl-...",
        worker="Worker_TP5",
    )
    assert r.complete


def test_retrieved_zero_is_parsed_and_incomplete():
    r = logs.parse_retrieval(
        "Retrieved 0 out of 6035 required tokens (from 6035 total tokens). size: 0.0000 gb, "
        "cost 0.0391 ms, throughput: 0.0000 GB/s"
    )
    assert (r.retrieved, r.required, r.throughput_gbps, r.complete) == (0, 6035, 0.0, False)
    assert r.req_id is None and r.worker is None


def test_retrieved_without_the_size_part():
    r = logs.parse_retrieval("[LMCache INFO] Retrieved 512 out of 6035 required tokens.")
    assert (r.retrieved, r.required, r.total, r.throughput_gbps) == (512, 6035, None, None)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "[INFO] Conditional routing: estimated_tokens=6750, threshold=4096, disaggregate=True",
            logs.RoutingDecision(6750, 4096, True),
        ),
        (
            "[INFO] Conditional routing: estimated_tokens=12, threshold=4096, disaggregate=False",
            logs.RoutingDecision(12, 4096, False),
        ),
        ("[INFO] DPD prefill selection: delegating to PrefixAwareRouter with 1 endpoints", None),
    ],
)
def test_routing_lines(line, expected):
    assert logs.parse_routing(line) == expected


def test_prefill_selection_and_routing_in_a_router_log():
    text = "\n".join(
        [
            "[INFO] Conditional routing: estimated_tokens=6750, threshold=4096, disaggregate=True",
            "[INFO] DPD prefill selection: delegating to PrefixAwareRouter with 1 endpoints",
            "[INFO] DPD prefill selection: PrefixAwareRouter selected http://10.1.54.203:8081",
            "[INFO] <req-id> prefill time (TTFT): 7.1913",
            "[INFO] Conditional routing: estimated_tokens=12, threshold=4096, disaggregate=False",
        ]
    )
    assert [d.disaggregate for d in logs.routing_decisions(text)] == [True, False]
    assert logs.prefill_selections(text) == [
        logs.PrefillSelection("PrefixAwareRouter", "http://10.1.54.203:8081")
    ]


def test_pd_roles_in_config_dict_lines():
    sender = "LMCache Configuration: {'chunk_size': 256, 'enable_pd': True, 'pd_role': 'sender'}"
    receiver = "{'pd_buffer_size': 8589934592, 'pd_role': 'receiver', 'transfer_channel': 'nixl'}"
    assert logs.pd_roles(sender) == {"sender"}
    assert logs.pd_roles(receiver) == {"receiver"}
    assert logs.pd_roles(f"{sender}\n{receiver}\n{sender}") == {"sender", "receiver"}
    assert logs.pd_roles('{"pd_role": "receiver"}') == {"receiver"}
    assert logs.pd_roles("kv_role='kv_producer' and no LMCache config") == set()


def test_buffer_full_lines_are_counted():
    text = "ok\n[LMCache WARNING] Failed to allocate memory object, retrying...\nok"
    assert logs.buffer_full_count(text) == 1
    assert logs.buffer_full_count("ok\nok") == 0
