"""Recording in the app: the Record action, its panel, live lines, captions and crash recovery.

`install(window)` (called once by the main window) adds everything; the rest of the app knows
only the two actions ("record", "captions") in `app.actions`. See `app.recording.feature`.
"""
