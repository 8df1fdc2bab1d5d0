"""The sizing maths: the model catalog, KV cache and PD buffer sizing, GPU memory budgets, GPU types and node capacity."""
