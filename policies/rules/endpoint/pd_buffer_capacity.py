"""hyperpod-dpd-pd-buffer-capacity: the buffer, counted in whole LMCache chunks (LMCache rounds
it down to whole chunks), holds one max-model-len transfer and the expected transfers in flight.
Without an expected load in config the documents' example (6,035-token prompts) and the decoder's
--max-num-seqs are assumed, and a shortfall is only advisory."""

from __future__ import annotations

from core.sizing.catalog import GIB
from core.sizing.kv_cache import (
    DOCS_PROMPT_TOKENS,
    buffer_chunks,
    chunks_for_tokens,
    kv_bytes_per_token_per_rank,
    recommend_pd_buffer,
)
from policies.rules import views
from policies.rules.base import Finding, Rule


def check(resources, limits):
    for iec, inputs in views.sized_dpd_endpoints(resources):
        model, _, tp, _, max_len, buffer = inputs
        kv = kv_bytes_per_token_per_rank(model, tp)
        chunks = buffer_chunks(buffer, kv)
        if chunks < chunks_for_tokens(max_len):
            yield Finding(
                iec.urn,
                f"PD_BUFFER_SIZE {buffer / GIB:g} GiB holds {chunks} LMCache chunks, fewer than "
                f"the {chunks_for_tokens(max_len)} of one {max_len}-token prompt: the longest "
                "prompts can never be transferred; raise "
                + views.pd_buffer_to(iec, recommend_pd_buffer(max_len, 1, max_len, kv)),
            )
        prompt = views.as_int(views.annotation(iec, "expected-prompt-tokens"))
        in_flight = views.as_int(views.annotation(iec, "expected-in-flight-transfers"))
        assumed = prompt is None or in_flight is None
        prompt = prompt or min(DOCS_PROMPT_TOKENS, max_len)
        in_flight = in_flight or views.role_numbers(iec, "decode").max_num_seqs
        fits = chunks // chunks_for_tokens(prompt)
        if fits < in_flight:
            need = recommend_pd_buffer(prompt, in_flight, max_len, kv)
            basis = (
                f"assumed (set {views.endpoint_key(iec, 'expectedPromptTokens')} and "
                "expectedInFlightTransfers to size for your load)"
                if assumed
                else "expected"
            )
            yield Finding(
                iec.urn,
                f"PD_BUFFER_SIZE {buffer / GIB:g} GiB holds {fits} transfers of {prompt} tokens "
                f"at once, fewer than the {in_flight} {basis}; the decoder will log 'Failed to "
                f"allocate memory object'. Set {views.pd_buffer_to(iec, need)} or add decode "
                "replicas",
                enforcement="advisory" if assumed else None,
            )


RULE = Rule(
    "hyperpod-dpd-pd-buffer-capacity",
    "PD buffer holds a max-model-len transfer and the expected transfers in flight",
    "mandatory",
    check,
    advisory_findings=True,
)
