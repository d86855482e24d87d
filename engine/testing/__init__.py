"""What tests, benchmarks and the GPU check build for themselves, kept apart from the product:
tiny VibeVoice-ASR checkpoints of the real architecture (`tiny`, trained on short clips by
`tiny_train` from `tiny_clips`) and a loopback decoder server that speaks the vLLM plugin's API
(`loopback_server`), and files with several audio streams (`streams`). Nothing in the product
imports this package."""
