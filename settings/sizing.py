"""The sizing of the configured endpoint: the numbers the plan's summary and the policies use."""

from __future__ import annotations

from core.catalog import INSTANCES, instance_spec, load_model
from core.sizing import SizingReport, size
from settings.model import StackSettings

# The decoder log line the DPD docs quote: a 6,035-token prompt.
DOCS_PROMPT_TOKENS = 6035


def endpoint_sizing(s: StackSettings) -> SizingReport | None:
    """Size the endpoint on its decode instance type. None when that type is not one of the
    five DPD types (the instance-type policy reports it); SizingError on bad model/TP input."""
    e = s.endpoint
    if not s.gpu_groups:
        return None  # config validation reports the missing GPU group
    decode_type = s.instance_type_for("decode")
    if decode_type not in INSTANCES:
        return None
    return size(
        load_model(e.model),
        instance_spec(decode_type),
        tp=e.tensor_parallel_size,
        prompt_tokens=e.expected_prompt_tokens or min(DOCS_PROMPT_TOKENS, e.max_model_len),
        pd_buffer_bytes=e.pd_buffer_size,
        gpu_memory_utilization=e.gpu_memory_utilization,
        max_model_len=e.max_model_len,
        in_flight=e.expected_in_flight_transfers,
    )
