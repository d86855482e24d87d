"""Using a Murmur server from the CLI and the app: `RemoteClient` (HTTP) and `RemotePipeline`
(the same `load` / `prepare` / `transcribe` / `run` as `engine.pipeline.Pipeline`, run remotely)."""
