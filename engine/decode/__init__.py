"""Murmur's decode engine: batched greedy decoding of a causal LM with per-row KV-cache eviction."""
