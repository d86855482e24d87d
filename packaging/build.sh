#!/usr/bin/env bash
# Build the Murmur desktop app with PyInstaller into dist/Murmur/ (one folder, start dist/Murmur/murmur-app).
#   packaging/build.sh              uses .venv/bin/python (make setup creates it)
#   PY=/path/to/python packaging/build.sh
# On Linux it also writes dist/Murmur/murmur.desktop and the icon, ready for
#   install -Dm644 dist/Murmur/murmur.desktop ~/.local/share/applications/murmur.desktop
#   install -Dm644 dist/Murmur/murmur.svg ~/.local/share/icons/hicolor/scalable/apps/murmur.svg
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
PYINSTALLER_VERSION="6.22.3"

"$PY" -m pip install -q "pyinstaller==${PYINSTALLER_VERSION}"
"$PY" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller packaging/murmur.spec

if [ "$(uname -s)" = "Linux" ]; then
  sed "s#^Exec=.*#Exec=$(pwd)/dist/Murmur/murmur-app %f#" packaging/murmur.desktop > dist/Murmur/murmur.desktop
  cp resources/icons/murmur.svg dist/Murmur/murmur.svg
fi
# Smoke test: the bundled program starts and prints its usage.
QT_QPA_PLATFORM=offscreen timeout 120 dist/Murmur/murmur-app --help >/dev/null
echo "built dist/Murmur ($(du -sh dist/Murmur | cut -f1))"
