"""Murmur's decode engine: batched greedy decoding of a causal LM with per-row KV-cache eviction.

The entry point is `engine.decode.engine.MurmurDecoder`; `engine.decode.api` is the boundary with
the model adapters. docs/engine.md describes the modules and their contracts.
"""
