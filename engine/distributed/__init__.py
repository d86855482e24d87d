"""Transcribing a corpus across the workers of a Ray cluster (GPUs, nodes, or CPU processes).

The chunks of every file are independent until stitching, so they spread over workers: the
driver decodes each file, finds its speech and plans its chunks, puts the audio into Ray's
object store and feeds one global queue of chunks (longest first) to Ray actors that each load
the backend once and decode batches; speakers, stitching and exports run per file as soon as
its last chunk is back. Modules: config (`ClusterConfig`), queue (job ordering and retries,
torch- and Ray-free, also used by the scheduling simulation), worker (the actor), cluster
(connecting and starting actors), dispatch (the driver's loop: batches in flight, dead workers,
retries, cancel), corpus (many files end to end), backend (`RayBackend`: one recording's chunks
over the cluster behind the ordinary `Backend` interface, for eval and bench).
Importing this package imports neither Ray nor torch.
"""

from engine.distributed.config import ClusterConfig

__all__ = ["ClusterConfig"]
