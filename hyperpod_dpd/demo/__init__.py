"""`hyperpod-dpd demo` (`make demo`): the benchmark and the canary tried offline, in one go, on
local stand-ins (fake OpenAI-compatible servers, a real Prometheus serving recorded series)."""
