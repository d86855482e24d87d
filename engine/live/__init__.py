"""Live: record from a microphone to FLAC as the audio arrives, and transcribe while it happens.

    source (microphone or file) ─► CaptureStream ─► FLAC on disk (flushed every ≤ 2 s)
                                        │
                                        └─► 16 kHz ─► StreamingVad ─► closed speech segments
                                                                         │
                                   LiveTranscriber (worker thread, unbounded queue) ◄─┘
                                        │ backend (whisper by default) + OnlineSpeakers
                                        └─► LiveLine callbacks

`LiveSession` wires these together; `engine.live.recovery` finds and repairs the recordings a
crash left behind. When a recording stops, the ordinary `Pipeline` runs over its file to make the
final transcript (words, chunks, global speakers). Nothing here imports Qt.
"""
