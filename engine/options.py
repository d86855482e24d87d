"""Every user-facing transcription option, declared once: `option_rows()`, one `Option` row each.

A row names the flag (`--speech-sink`), its key (the argparse dest, also the name the option has
in sweep files and saved settings), the config field it sets (`path`), its type, choices, help,
the settings dialog's label (empty: not in the dialog), the surfaces that offer it and, for the
few a server takes per request, the form field (`form`; `request_fields`). A path
starts with the config that holds the field: `backend.` (the chosen backend's config; `backends`
says which backends have it), or `pipeline.` (`PipelineConfig`), then the field names down the
nesting, e.g. `backend.decode.eviction.speech_sink`. Two eviction paths are not fields: `policy`
picks a policy or a preset (`EvictionConfig.named`), `window` is the policy's one window
(`EvictionConfig.changed`). The rows are built when asked for (`option_rows`, `by_name`, `rows`,
`dialog_rows`), never held at module level. A flag's text becomes a row's value through the
parsers of `engine.option_values`. `engine.recipe.recipe_from` turns given values into a validated
`Recipe`; `engine.cli.option_args` turns the rows into argparse groups. This module imports no
torch, so the app builds its dialog from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.backends.vibevoice.config import ACOUSTIC_MODES, ATTENTIONS, BUDGETS, DTYPES, ENGINES
from engine.decode.eviction import POLICIES, PRESETS, SPEECH_CAPS
from engine.option_values import channel_arg, language_code, memory_size, option_text, terms
from engine.speakers import DEFAULT_VOICES, DIARIZER_CHOICES

SYSTEM = ("transcribe", "serve", "eval")  # the surfaces that describe one system of any backend
LIVE = ("record", "watch")  # the surfaces that run whisper on what is recorded or dropped
EVERY = (*SYSTEM, *LIVE)
SPEAKERS = (*EVERY, "bench")  # a sweep's systems share the speaker settings
TUNING = (*SYSTEM, "kv-plan")  # the eviction settings, also applied to every policy kv-plan compares
BOTH = ("whisper", "vibevoice")
VIBEVOICE_GROUP = "vibevoice options"
ENGINE_GROUP = "decode engine options (--engine murmur; see docs/engine.md)"
SPEAKER_GROUP = "speakers (see docs/speakers.md)"
LANGUAGES = ("en", "auto", "ar", "da", "de", "es", "fi", "fr", "hi", "it", "ja", "ko", "nl", "no", "pl", "pt",
             "ru", "sv", "tr", "uk", "zh")  # the dialog's list; the flag takes any code  # fmt: skip


@dataclass(frozen=True, slots=True)
class Option:
    flag: str  # "--speech-sink"
    path: str  # "backend.decode.eviction.speech_sink" (see the module docstring)
    help: str
    kind: Callable[[str], Any] = str  # parses the flag's text (argparse `type`)
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    backends: tuple[str, ...] = BOTH  # backend paths: the backends whose config has the field
    surfaces: tuple[str, ...] = SYSTEM
    group: str | None = None  # the argparse group's title (None: the command's own options)
    label: str = ""  # the settings dialog's row label ("": not in the dialog)
    tooltip: str = ""  # the dialog's tooltip (default: the help)
    key: str = ""  # the argparse dest and saved-settings name (default: the flag's name)
    value: Callable[[Any], Any] | None = None  # the field's value from the parsed one (default: as is)
    bare: Any = None  # the value of the flag given without one (None: the flag needs a value)
    form: str = ""  # the form field a request to `murmur serve` sets it with, per job ("": the
    # server's own setting, a flag given when it starts; `request_fields`)

    @property
    def name(self) -> str:
        return self.key or self.flag.removeprefix("--").replace("-", "_")

    @property
    def fields(self) -> tuple[str, ...]:
        """The field names after the owner: ("decode", "eviction", "speech_sink")."""
        return tuple(self.path.split(".")[1:])

    @property
    def owner(self) -> str:
        return self.path.split(".")[0]

    def applies_to(self, backend: str) -> bool:
        return self.owner == "pipeline" or backend in self.backends

    def field_value(self, given: Any) -> Any:
        return self.value(given) if self.value is not None else given


def _is_single(mode: str) -> bool:
    """`--mode`'s value as `PipelineConfig.single_pass` holds it."""
    return mode == "single"


def _eviction(flag: str, field: str, help: str, kind: Callable[[str], Any] = int, **more: Any) -> Option:
    meta = more.pop("metavar", "N")
    return Option(flag, f"backend.decode.eviction.{field}", help, kind, metavar=meta, backends=("vibevoice",),
                  surfaces=TUNING, group=ENGINE_GROUP, **more)  # fmt: skip


def _vibevoice(flag: str, field: str, help: str, **more: Any) -> Option:
    return Option(flag, f"backend.{field}", help, backends=("vibevoice",), group=VIBEVOICE_GROUP, **more)


def _speakers(flag: str, field: str, help: str, **more: Any) -> Option:
    return Option(flag, f"pipeline.speakers.{field}", help, surfaces=SPEAKERS, group=SPEAKER_GROUP, **more)


def option_rows() -> tuple[Option, ...]:
    """Every row, in the order `--help` and the settings dialog show them. Built on each call (a few
    dozen frozen rows, microseconds): the module keeps no table of its own."""
    return (*_system_rows(), *_vibevoice_rows(), *_engine_rows(), *_speaker_rows())


def by_name() -> dict[str, Option]:
    """Every row by its name (`Option.name`: the argparse dest, the saved-settings name)."""
    return {o.name: o for o in option_rows()}


def _system_rows() -> tuple[Option, ...]:
    """The rows of every backend and of the pipeline: model, device, chunking, language…"""
    return (
        Option("--model", "backend.model", "model name or local folder (default: the backend's own)",
               surfaces=EVERY, label="Model", tooltip="A model name, or a folder holding a downloaded "
               "model. Empty: the backend's default model."),
        Option("--device", "backend.device", "default: auto", choices=("auto", "cpu", "cuda"),
               label="Device", tooltip="Where the model runs; auto picks a GPU when there is one."),
        Option("--batch-size", "backend.batch_size", "chunks decoded together (default: backend's; whisper "
               "on a CPU: at most 2 per call, in calls side by side)", int, label="Batch size",
               tooltip="Chunks decoded together; larger is faster on a GPU and needs more memory."),
        Option("--chunk-seconds", "pipeline.chunk_seconds", "longest chunk, cut in silence (default: 30 for "
               "whisper, 300 for vibevoice)", float, label="Chunk size (s)",
               tooltip="Longest piece of audio sent to the model at once, cut in silence."),
        Option("--mode", "pipeline.single_pass", "chunked (default): VAD chunks run in batches; single: the "
               "whole recording in one pass", choices=("chunked", "single"), value=_is_single),
        Option("--language", "backend.language", "whisper: the spoken language (en, de, fr…) or auto to "
               "detect it (multilingual models; the bundled tiny.en is English-only); default: en",
               language_code, backends=("whisper",), surfaces=EVERY, label="Language", form="language",
               tooltip="The language spoken; auto detects it. The bundled tiny.en (and every model whose "
               "name ends in .en) is English-only: choose a multilingual model (e.g. small) for other "
               "languages."),
        Option("--prompt", "backend.prompt", "whisper: an initial prompt, text in the recording's style and "
               "spelling (the server takes it per request as OpenAI's prompt)", backends=("whisper",),
               form="prompt"),
        Option("--temperature", "backend.temperature", "whisper: sample from this temperature up where "
               "greedy decoding breaks (0, the default: greedy)", float, metavar="T", backends=("whisper",),
               form="temperature"),
        Option("--task", "backend.task", "whisper: transcribe (default) or translate into English "
               "(multilingual models only)", choices=("transcribe", "translate"), backends=("whisper",)),
        Option("--channel", "pipeline.channel", "which channel to transcribe: mix (the mean of all, "
               "default), left, right or a number from 0 (e.g. a recorder with one microphone per "
               "channel)", channel_arg, metavar="WHICH", surfaces=EVERY),
        Option("--context", "backend.context", "names and terms to expect, comma separated: "
               '"Alice, Kubernetes"', terms, label="Names and terms", tooltip="Names, jargon and acronyms "
               "the recording contains, comma separated; they help the model spell them."),
        Option("--quality", "backend.quality", "whisper: fast (default; batched, broken chunks decoded "
               "again) or accurate (sequential, conditioned on the previous text, with temperature "
               "fallback; fewer errors, slower: see docs/performance.md)", choices=("fast", "accurate"),
               backends=("whisper",), label="Quality", tooltip="fast: chunks decoded in batches, broken "
               "ones again; accurate: decoded one after another, each knowing the text before it (fewer "
               "errors, slower)."),
        Option("--audio-stream", "pipeline.audio_stream", "which audio stream of a file with several "
               "(from 0; default: the one marked default)", int, metavar="N", surfaces=("transcribe",)),
    )  # fmt: skip


def _vibevoice_rows() -> tuple[Option, ...]:
    """The VibeVoice backend's own rows (`VIBEVOICE_GROUP`)."""
    return (
        _vibevoice("--dtype", "dtype", "weights' dtype (default: auto)", choices=DTYPES, label="Precision",
                   tooltip="Weights' number format; auto picks bfloat16 on a GPU and float32 on the CPU."),
        _vibevoice("--attention", "attention", "attention kernel (default: sdpa)", choices=ATTENTIONS),
        _vibevoice("--budget", "budget", "tokens per chunk rule (default: paper)", choices=BUDGETS),
        _vibevoice("--engine", "engine", "decoder (default: murmur)", choices=ENGINES, label="Decoder",
                   tooltip="murmur: Murmur's batched decode engine (needed for KV eviction); hf: "
                   "transformers' generate, the reference; server: a VibeVoice vLLM server."),
        _vibevoice("--acoustic", "acoustic", "audio latents (default: mean)", choices=ACOUSTIC_MODES),
        _vibevoice("--server", "server", "--engine server: the VibeVoice vLLM server's URL", metavar="URL"),
        _vibevoice("--concurrency", "concurrency", "--engine server: requests in flight (8)", kind=int,
                   metavar="K"),
    )  # fmt: skip


def _engine_rows() -> tuple[Option, ...]:
    """The decode engine's rows: KV eviction, its memory budget, the repeat penalty (`ENGINE_GROUP`)."""
    return (
        Option("--eviction", "backend.decode.eviction.policy", "KV-cache eviction (default: none)",
               choices=(*POLICIES, *PRESETS), backends=("vibevoice",), group=ENGINE_GROUP,
               label="KV eviction", tooltip="Drop old attention entries while decoding long chunks "
               "(Murmur decoder): faster, slightly less accurate."),
        Option("--kv-memory", "backend.decode.kv_memory_limit", "KV memory budget, e.g. 8GiB or 500MB: "
               "rows are admitted while they fit it at the size their eviction policy keeps (default: the "
               "device's free memory less a reserve)", memory_size, metavar="SIZE", backends=("vibevoice",),
               surfaces=TUNING, group=ENGINE_GROUP, key="kv_memory_limit"),
        _eviction("--sink", "n_sink", "output sink tokens kept (default: 4)"),
        _eviction("--window", "window", "the policy's window in tokens (output: outputs kept; speech "
                  "policies: speech); `both` has two: use --output-window / --speech-window", metavar="W"),
        _eviction("--output-window", "output_window", "recent output tokens kept (default: 1024)",
                  metavar="W"),
        _eviction("--speech-window", "speech_window", "speech window, tokens (default: 512)", metavar="W"),
        _eviction("--delay", "delay", "decode steps before speech eviction (default: 32)", metavar="D"),
        _eviction("--speech-rate", "speech_rate", "speech tokens dropped per step after the delay "
                  "(default: 8)", float, metavar="R"),
        _eviction("--speech-sink", "speech_sink", "pinned speech tokens (default: 32)"),
        _eviction("--speech-layers", "layers", 'per-layer speech settings, e.g. \'[{"start": 0, "end": 20, '
                  '"keep": true}]\'; layers outside every range use the policy\'s settings (as in the '
                  "authors' code)", str, metavar="JSON"),
        _eviction("--speech-cap", "speech_cap", "what caps speech eviction (speech, both): each row's own "
                  "span (row, default) or the shortest span among the rows decoded together (batch-min: "
                  "the authors' batching, Table 4)", str, choices=SPEECH_CAPS, metavar=None),
        _eviction("--look-back", "look_back", "speech-anchor: tokens kept before the anchor"),
        _eviction("--look-ahead", "look_ahead", "speech-anchor: last speech tokens always kept"),
        _eviction("--turn-tokens", "turn_tokens", "speech-anchor: speech tokens of a transcript segment; "
                  "rows are sized for an anchor four segments behind the text, or a 20th of the speech if "
                  "more (default: 28, 3.75 s)"),
        _eviction("--word-rate", "word_rate", "speech-anchor: the fewest words per second of VAD speech the "
                  "text check allows before the anchor waits for the words (default: 1.5; 0: no text "
                  "check)", float, metavar="W"),
        Option("--repetition-penalty", "backend.decode.repetition_penalty", "repeat penalty (default: 1, "
               "off)", float, metavar="P", backends=("vibevoice",), group=ENGINE_GROUP),
    )  # fmt: skip


def _speaker_rows() -> tuple[Option, ...]:
    """The speaker rows (`SPEAKER_GROUP`), offered on every surface and to sweeps."""
    return (
        _speakers("--diarizer", "diarizer", "who speaks when: embedded (default, offline), pyannote (needs "
                  "its weights), none", choices=DIARIZER_CHOICES, label="Speaker finder", form="diarizer",
                  tooltip="Who speaks when: embedded (offline, built in), pyannote (needs its weights) or "
                  "none."),
        _speakers("--voices", "voices", "name speakers whose voices you remembered (murmur voices add), "
                  "from the default voice library or the one at PATH; put it after the files, or write "
                  "--voices=PATH", metavar="PATH", bare=DEFAULT_VOICES, label="Known voices",
                  tooltip="Name speakers whose voices you remembered (Speakers ▸ Known Voices…)."),
        _speakers("--speakers", "num_speakers", "the number of speakers, if known", kind=int, metavar="N",
                  label="Speakers", tooltip="How many people speak, if you know it.", form="num_speakers"),
        _speakers("--min-speakers", "min_speakers", "at least N speakers", kind=int, metavar="N",
                  label="At least", tooltip="The fewest speakers to look for.", form="min_speakers"),
        _speakers("--max-speakers", "max_speakers", "at most N speakers", kind=int, metavar="N",
                  label="At most", tooltip="The most speakers to look for.", form="max_speakers"),
        _speakers("--pyannote", "pyannote", "pyannote pipeline: a local folder with config.yaml, or a hub "
                  "id (default: pyannote/speaker-diarization-community-1)", metavar="PIPELINE",
                  label="pyannote pipeline", tooltip="A folder with a pyannote config.yaml, or a hub id. "
                  "Empty: pyannote's default pipeline."),
        _speakers("--hf-token", "hf_token", "Hugging Face token for a hub pipeline (default: $HF_TOKEN)"),
        _speakers("--speaker-stitching", "stitching", "chunk speakers → global speakers: one-to-one "
                  "(default: an optimal assignment per chunk on the whole chunk) or boundary (the paper's "
                  "permutation between adjacent chunks, from the diarization where they meet)",
                  choices=("one-to-one", "boundary")),
    )  # fmt: skip


# Config fields without a row, and why; a path covers the fields nested under it. A new config
# field gets a row above or an entry here (tests/engine/test_options.py holds every field to it).
INTERNAL: dict[str, str] = {
    "backend.offline": "HF_HUB_OFFLINE decides (whisper: model names never go to the hub)",
    "backend.compute_type": "tuning: CTranslate2 picks int8 on a CPU, float16 on CUDA",
    "backend.cpu_batch_cap": "tuning (the app's watched runs set it)",
    "backend.ramp": "set by the server and the app for first lines sooner",
    "backend.beam_size": "tuning",
    "backend.cpu_threads": "tuning (automatic)",
    "backend.cpu_lanes": "tuning (automatic)",
    "backend.repair": "tuning (benchmarks)",
    "backend.gap_seconds": "tuning (benchmarks)",
    "backend.timestamp_tokens": "tuning (benchmarks)",
    "backend.min_new_tokens": "the token budget's floor: `--option` in eval, sweep files",
    "backend.max_new_tokens": "the checkpoint's limit: `--option` in eval, sweep files",
    "backend.seed": "with --acoustic seeded: `--option` in eval, sweep files",
    "backend.encoder_segment_seconds": "tuning: `--option` in eval, sweep files",
    "backend.loop_recovery": "eval/bench --loop-recovery (engine.cli.paper_switches)",
    "backend.server_model": "the vLLM plugin's served name: `--option` in eval, sweep files",
    "backend.server_timeout": "`--option` in eval, sweep files",
    "backend.server_retries": "`--option` in eval, sweep files",
    "backend.decode.max_batch": "--batch-size (the backend's batch_size) decides it",
    "backend.decode.attention": "the engine picks its kernel (bench scripts set it)",
    "backend.decode.cuda_graphs": "tuning (bench scripts)",
    "backend.decode.emulate_graphs": "tests and dry runs",
    "backend.decode.glue": "tuning (bench scripts)",
    "backend.decode.loop": "thresholds; --loop-recovery turns it off",
    "backend.decode.kv_slots": "the first batch's need decides it",
    "pipeline.chunk_pad": "the chunker's margin",
    "pipeline.vad": "the voice activity detector's thresholds",
    "pipeline.stitch": "stitching thresholds; eval/bench --inversions sets `inversions`",
    "pipeline.speakers_alongside": "diarize beside the decoder whenever it can",
}


def rows(surface: str, backend: str | None = None) -> tuple[Option, ...]:
    """The rows a surface offers (for one backend: only those that apply to it)."""
    offered = (o for o in option_rows() if surface in o.surfaces)
    return tuple(o for o in offered if backend is None or o.applies_to(backend))


def request_fields(values: dict[str, Any], backend: str) -> dict[str, str]:
    """The form fields of a request to `murmur serve` for option `values` (by name; None: not
    given): those of the rows a server takes per job (`Option.form`) that apply to `backend`."""
    table = by_name()
    rows = (table[name] for name, value in values.items() if value is not None)
    return {o.form: option_text(values[o.name]) for o in rows if o.form and o.applies_to(backend)}


def dialog_rows() -> tuple[Option, ...]:
    """The rows the app's settings dialog shows, in table order."""
    return tuple(o for o in option_rows() if o.label)
