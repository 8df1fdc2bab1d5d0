"""Rules on an endpoint's workers: memory, hash seed, known image issues, model size, PD buffer, capacity per role, routing, /dev/shm, tensor parallelism."""
