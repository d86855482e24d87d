"""Dialogue text for synthetic meetings, composed from a built-in corpus by a seeded generator.

`load_corpus()` reads `sentences.txt` (plain meeting-style English grouped by topic: no digits, no
hyphens, only letters, apostrophes and `. , ?`). `Script` draws turn texts from it with a
`numpy.random.Generator`: the meeting opens on the agenda topic, then moves through the other
topics in a seeded order; about one sentence in five is general discussion. Within a topic no
sentence repeats until the topic's deck is used up. The same generator state gives the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

BACKCHANNELS = (
    "Yes.",
    "Right.",
    "Sure.",
    "Exactly.",
    "I see.",
    "Agreed.",
    "Good point.",
    "Thank you.",
    "Absolutely.",
    "Fair enough.",
    "Got it.",
    "That makes sense.",
    "Of course.",
    "Yeah.",
    "Sounds good.",
    "Great.",
    "True.",
    "Definitely.",
    "No problem.",
    "I agree.",
)
SENTENCES_PER_TURN = (1, 2, 3, 4)
SENTENCES_PER_TURN_P = (0.35, 0.3, 0.2, 0.15)
_OPENING_TOPIC = "agenda"
_GENERAL_TOPIC = "discussion"
_GENERAL_SHARE = 0.2
_TOPIC_LENGTH = (6, 14)  # sentences spent on a topic before moving on
_PLAIN_SENTENCE = re.compile(r"[A-Z][A-Za-z' ,]*[A-Za-z][.?]")


@dataclass(frozen=True, slots=True)
class Corpus:
    """Sentences grouped by topic, in file order."""

    topics: tuple[tuple[str, tuple[str, ...]], ...]

    def __post_init__(self) -> None:
        names = [name for name, _ in self.topics]
        for required in (_OPENING_TOPIC, _GENERAL_TOPIC):
            if required not in names:
                raise ValueError(f"the sentence corpus needs a '{required}' topic")
        if len(names) < 3:
            raise ValueError("the sentence corpus needs at least one topic besides agenda and discussion")
        for name, sentences in self.topics:
            if not sentences:
                raise ValueError(f"topic {name!r} has no sentences")
            for sentence in sentences:
                if not _PLAIN_SENTENCE.fullmatch(sentence):
                    raise ValueError(f"corpus sentence is not plain text: {sentence!r}")

    def sentences(self, topic: str) -> tuple[str, ...]:
        return dict(self.topics)[topic]

    @property
    def all_sentences(self) -> tuple[str, ...]:
        return tuple(s for _, sentences in self.topics for s in sentences)


def parse_corpus(text: str) -> Corpus:
    """Parse corpus text: `## topic` headers, one sentence per line, `#` comments and blanks ignored."""
    topics: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            topics.append((line[3:].strip(), []))
        elif line and not line.startswith("#"):
            if not topics:
                raise ValueError("corpus sentences must follow a '## topic' header")
            topics[-1][1].append(line)
    return Corpus(tuple((name, tuple(sentences)) for name, sentences in topics))


def load_corpus() -> Corpus:
    """The built-in corpus shipped beside this module."""
    return parse_corpus(resources.files("engine.synth").joinpath("sentences.txt").read_text("utf-8"))


class Script:
    """Draws turn texts; all randomness comes from the generator it is given."""

    def __init__(self, corpus: Corpus, rng: np.random.Generator) -> None:
        self._corpus = corpus
        self._rng = rng
        self._decks: dict[str, list[str]] = {}
        topical = [name for name, _ in corpus.topics if name not in (_OPENING_TOPIC, _GENERAL_TOPIC)]
        self._agenda = [topical[i] for i in rng.permutation(len(topical))]
        self._topic = _OPENING_TOPIC
        self._left_in_topic = int(rng.integers(2, 4))

    def sentence_count(self) -> int:
        """How many sentences the next full turn has (1–4, shorter turns more likely)."""
        return int(self._rng.choice(SENTENCES_PER_TURN, p=SENTENCES_PER_TURN_P))

    def turn(self, sentences: int) -> str:
        """A turn of `sentences` sentences from the current topic (with some general discussion)."""
        if sentences < 1:
            raise ValueError(f"a turn needs at least one sentence, got {sentences}")
        return " ".join(self._next_sentence() for _ in range(sentences))

    def backchannel(self) -> str:
        """A short reply such as "Right." or "Sounds good."."""
        return BACKCHANNELS[int(self._rng.integers(len(BACKCHANNELS)))]

    def _next_sentence(self) -> str:
        if self._left_in_topic <= 0:
            self._topic = self._agenda.pop(0)
            self._agenda.append(self._topic)
            self._left_in_topic = int(self._rng.integers(*_TOPIC_LENGTH))
        self._left_in_topic -= 1
        general = self._rng.random() < _GENERAL_SHARE and self._topic != _OPENING_TOPIC
        return self._draw(_GENERAL_TOPIC if general else self._topic)

    def _draw(self, topic: str) -> str:
        deck = self._decks.get(topic)
        if not deck:
            sentences = self._corpus.sentences(topic)
            deck = [sentences[i] for i in self._rng.permutation(len(sentences))]
            self._decks[topic] = deck
        return deck.pop()
