#!/usr/bin/env bash
# Build Murmur with PyInstaller into one folder holding murmur-app (the desktop app), murmur (the
# command line) and murmur-selftest (transcribes the bundled demo in the app and reports).
#   packaging/build.sh                 the default variant into dist/Murmur/ (no torch)
#   VARIANT=full packaging/build.sh    with torch + transformers (VibeVoice) into dist/full/Murmur/
#   PY=/path/to/python DIST=folder WORK=folder packaging/build.sh
# Needs the dev extra (pyinstaller, onnx): make setup installs it. First it exports the GE2E speaker
# encoder to ONNX from resemblyzer's weights and checks it against the torch encoder on the demo's
# speech (the build stops if they differ), so the bundle runs speakers on onnxruntime.
# On Linux it also writes murmur.desktop and the icon into the folder, ready for
#   install -Dm644 dist/Murmur/murmur.desktop ~/.local/share/applications/murmur.desktop
#   install -Dm644 dist/Murmur/murmur.svg ~/.local/share/icons/hicolor/scalable/apps/murmur.svg
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
VARIANT="${VARIANT:-default}"
case "$VARIANT" in
  default) DIST="${DIST:-dist}" ;;
  full) DIST="${DIST:-dist/full}" ;;
  *) echo "VARIANT must be default or full, not '$VARIANT'" >&2; exit 2 ;;
esac
WORK="${WORK:-build/pyinstaller-$VARIANT}"
started=$(date +%s)

"$PY" -c "import PyInstaller, onnx" 2>/dev/null || {
  echo "pyinstaller and onnx are missing: run make setup (they are in the dev extra)" >&2; exit 1; }
"$PY" -m engine.speakers.ge2e_onnx "$WORK/ge2e.onnx" --check resources/demo/meeting.flac
MURMUR_VARIANT="$VARIANT" MURMUR_GE2E_ONNX="$WORK/ge2e.onnx" \
  "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$DIST" --workpath "$WORK" packaging/murmur.spec

APP="$DIST/Murmur"
# Some wheels ship their libraries with debug information: ctranslate2's extension is 68 MB with it,
# 2 MB without. Drop debug sections only (symbols stay, so nothing that links to them changes).
find "$APP/_internal" -type f -name "*.so*" -size +1M | while read -r lib; do
  # (plain grep reads all of readelf's output; with -q, readelf can die of SIGPIPE and skip the strip)
  if readelf -S "$lib" 2>/dev/null | grep "\.debug_info" >/dev/null; then strip --strip-debug "$lib"; fi
done
if [ "$(uname -s)" = "Linux" ]; then
  sed "s#^Exec=.*#Exec=$(cd "$APP" && pwd)/murmur-app %f#" packaging/murmur.desktop > "$APP/murmur.desktop"
  cp resources/icons/murmur.svg "$APP/murmur.svg"
fi
"$APP/murmur" --version >/dev/null  # the bundled programs start
echo "built $APP ($VARIANT): $(du -sm "$APP" | cut -f1) MB in $(( $(date +%s) - started )) s"
