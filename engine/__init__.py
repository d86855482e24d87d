"""Murmur's headless engine: long-form, speaker-attributed speech recognition.

The public entry points are `engine.pipeline.Pipeline` (what the CLI and the GUI both run),
the data types in `engine.types` and the exporters in `engine.export`. Nothing here imports Qt.
"""

__version__ = "0.1.0"
