"""Murmur's desktop app (PySide6 + pyqtgraph): `murmur-app`, or `python -m app`."""
