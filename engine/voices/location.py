"""Where the voice library lives when the user names none.

Contract: `default_library_path(environ, platform)` is `murmur/voices.sqlite` inside the user's data
folder — `$XDG_DATA_HOME` (else `~/.local/share`) on Linux and other Unix systems,
`~/Library/Application Support` on macOS, `%APPDATA%` (else `~/AppData/Roaming`) on Windows. It only
names the file: nothing is created until a voice is stored.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

FILE_NAME = "voices.sqlite"
APP_FOLDER = "murmur"


def data_folder(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The user's data folder on this platform (see the module contract)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    home = Path(environ.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform.startswith("win"):
        appdata = environ.get("APPDATA")
        return Path(appdata) if appdata else home / "AppData" / "Roaming"
    xdg = environ.get("XDG_DATA_HOME")
    return Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".local" / "share"


def default_library_path(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """`<data folder>/murmur/voices.sqlite`."""
    return data_folder(environ, platform) / APP_FOLDER / FILE_NAME
