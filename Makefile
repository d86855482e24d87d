# Murmur: one command to set up and run the demo, one to set up and run the tests.
#   make demo   installs what is missing, then transcribes the bundled demo meeting into out/demo/
#   make test   installs what is missing, then runs the test suite (slow and GPU tests excluded)
#   make app-bundle [VARIANT=full]   builds the desktop app with PyInstaller into dist/Murmur/
#               (VARIANT=full, with torch for VibeVoice: dist/full/Murmur/); see docs/app.md
# The environment lives in .venv/; re-runs reuse it until pyproject.toml changes.

PY      ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-$(shell cat pyproject.toml packaging/requirements-nodeps.txt 2>/dev/null | sha1sum | cut -c1-12)
APT_PKGS := espeak-ng libespeak-ng1 ffmpeg libportaudio2 sox pulseaudio pulseaudio-utils libasound2-plugins
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export QT_QPA_PLATFORM ?= offscreen

.PHONY: setup system demo test test-all lint bench gpu-check gpu-check-device mutate clean-venv app-bundle

setup: system $(STAMP)

system:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml packaging/requirements-nodeps.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q -U pip 2>&1 | grep -v "^WARNING: Location" || true
	$(BIN)/pip install -q -e ".[dev]" 2>&1 | grep -v "^WARNING: Location" || true
	$(BIN)/pip install -q --no-deps -r packaging/requirements-nodeps.txt 2>&1 | grep -v "^WARNING: Location" || true
	$(BIN)/python -c "import engine, faster_whisper, silero_vad, resemblyzer, PySide6, pyqtgraph, meeteval"
	rm -f $(VENV)/.installed-*; touch $@

demo: setup
	$(BIN)/murmur transcribe resources/demo/meeting.flac --out out/demo --format srt,vtt,txt,json,docx,rttm,seglst

test: setup
	MURMUR_LEAK_CHECK=fail $(BIN)/python -m pytest -q -m "not slow and not gpu"

test-all: setup
	$(BIN)/python -m pytest -q

VARIANT ?= default
app-bundle: setup
	VARIANT=$(VARIANT) PY=$(BIN)/python packaging/build.sh

# one H100/H200: correctness checks, then decode speed against the bandwidth roofline (< 8 min)
gpu-check: setup
	$(BIN)/python bench/gpu_check.py

# mutation testing of the core modules ([tool.mutmut] in pyproject.toml); MUTANTS narrows it,
# e.g. make mutate MUTANTS='engine.stitching*'. About one mutant a second on two cores.
MUTANTS ?=
mutate: setup
	QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 $(BIN)/mutmut run --max-children 2 $(MUTANTS) || true
	$(BIN)/python bench/mutation_score.py mutants

# On a GPU machine as it comes (its own python3 with torch, transformers, numpy; no setup, no
# network): checks, then the table until the 320 s budget; hard stop at 400 s. Everything decided is
# in $(GPU_OUT)/summary.json, table.txt and log.txt even if the run is cut short.
GPU_OUT ?= $(if $(OUT),$(OUT),gpu_check_out)
gpu-check-device:
	PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false timeout 400 python3 bench/gpu_check.py --budget-s 320 --out $(GPU_OUT)

lint: setup
	$(BIN)/ruff check engine app tests bench

clean-venv:
	rm -rf $(VENV)
