"""Metric wiring checked against numbers the reference libraries publish (docs, READMEs, tests).

Sources: jiwer's usage and alignment docs; meeteval's README and the doctests of `wer/wer/cp.py`
and `tests/test_time_constrained.py`; pyannote.metrics' `tests/test_diarization.py`.
"""

from __future__ import annotations

import pytest
from meeteval.wer import combine_error_rates
from meeteval.wer.wer.cp import cp_word_error_rate_multifile

from engine.evaluation.metrics import (
    ErrorCount,
    MetricConfig,
    cp_error,
    diarization_error,
    pool,
    score_recording,
    tcp_error,
    word_error,
)
from engine.evaluation.reference import Reference, TextSegment


def segs(*items: tuple[str, str]) -> list[TextSegment]:
    return [TextSegment(speaker, text) for speaker, text in items]


def turns(*items: tuple[float, float, str]) -> list[TextSegment]:
    return [TextSegment(speaker, "", start, end) for start, end, speaker in items]


# --- jiwer (WER) ---------------------------------------------------------------------------


def test_wer_of_the_jiwer_usage_example_is_one_half():
    assert word_error("hello world", "hello duck").rate == 0.5


def test_pooled_wer_reproduces_jiwers_alignment_example():
    # jiwer docs (visualize_alignment): S=2 D=2 I=4 hits=5, wer=88.89 %
    pairs = [
        ("short one here", "shoe order one"),
        ("quite a bit of longer sentence", "quite bit of an even longest sentence here"),
    ]
    total = pool(word_error(r, h) for r, h in pairs)
    assert total is not None
    assert dict(total.parts) == {"substitutions": 2, "deletions": 2, "insertions": 4}
    assert total.errors == 8 and total.length == 9
    assert round(100 * total.rate, 2) == 88.89


def test_wer_matches_meetevals_siso_readme_example():
    count = word_error("The quick brown fox jumps over the lazy dog", "The kwick brown fox jump over lazy")
    assert (count.errors, count.length) == (4, 9)
    assert dict(count.parts)["deletions"] == 2 and dict(count.parts)["substitutions"] == 2


# --- meeteval (cpWER, tcpWER) ---------------------------------------------------------------


def test_cpwer_matches_meetevals_readme_example():
    ref = segs(("A", "The quick brown fox"), ("B", "jumps over the lazy dog"))
    hyp = segs(("h0", "The kwick brown fox"), ("h1", "jump over lazy "))
    count = cp_error(ref, hyp)
    assert (count.errors, count.length) == (4, 9)
    assert count.rate == pytest.approx(0.4444444444444444)


def test_cpwer_counts_an_extra_hypothesis_speaker_as_insertions():
    # cp.py doctest: cp_word_error_rate(['a b', 'c d'], ['a b', 'c d', 'e f']) -> 0.5, 2 insertions
    count = cp_error(segs(("r0", "a b"), ("r1", "c d")), segs(("h0", "a b"), ("h1", "c d"), ("h2", "e f")))
    assert count.rate == 0.5 and dict(count.parts)["insertions"] == 2


def test_cpwer_can_exceed_one_when_the_hypothesis_overestimates():
    # cp.py doctest: {'r0': 'a b'} vs {'h0': 'z', 'h1': 'a e f'} -> 1.5
    count = cp_error(segs(("r0", "a b")), segs(("h0", "z"), ("h1", "a e f")))
    assert (count.errors, count.length, count.rate) == (3, 2, 1.5)


def test_pooling_equals_meetevals_combine_error_rates_on_the_readme_example():
    reference = {
        "recordingA": {"speakerA": "First example", "speakerB": "First example second speaker"},
        "recordingB": {"speakerA": "Second example"},
    }
    hypothesis = {
        "recordingA": ["First example with errors", "First example second speaker"],
        "recordingB": ["Second example", "Overestimated speaker"],
    }
    ours = {
        rid: cp_error(
            segs(*reference[rid].items()), segs(*((f"h{i}", t) for i, t in enumerate(hypothesis[rid])))
        )
        for rid in reference
    }
    assert [ours[r].rate for r in ("recordingA", "recordingB")] == [pytest.approx(1 / 3), 1.0]
    theirs = combine_error_rates(cp_word_error_rate_multifile(reference, hypothesis))
    pooled = pool(ours.values())
    assert pooled is not None
    assert (pooled.errors, pooled.length, pooled.rate) == (theirs.errors, theirs.length, 0.5)


def test_tcpwer_matches_meetevals_two_recording_readme_example_with_a_5_s_collar():
    ref = [TextSegment("Alice", "The quick brown fox jumps over the lazy dog", 0.0, 1.0)]
    hyp = [TextSegment("spk-1", "The kwick brown fox jump over lazy", 0.0, 1.0)]
    per_recording = [tcp_error(ref, hyp, collar=5.0) for _ in ("recordingA", "recordingB")]
    pooled = pool(per_recording)
    assert pooled is not None and (pooled.errors, pooled.length) == (8, 18)


def test_tcpwer_collar_forgives_timing_as_in_meetevals_sorting_test():
    # tests/test_time_constrained.py: 0.75 without a collar, 0 with a 1 s collar (segment order)
    ref = [TextSegment("A", "a b c d", 0.0, 4.0), TextSegment("A", "e f g h", 2.0, 6.0)]
    hyp = [TextSegment("X", "a b c d e f g h", 0.0, 6.0)]
    assert tcp_error(ref, hyp, collar=0.0).rate == 0.75
    assert tcp_error(ref, hyp, collar=1.0).rate == 0.0


# --- pyannote.metrics (DER) -----------------------------------------------------------------

REFERENCE = turns((0, 10, "A"), (12, 20, "B"), (24, 27, "A"), (30, 40, "C"))
OVERLAPPING_REFERENCE = turns((0, 13, "A"), (12, 20, "B"), (24, 27, "A"), (30, 40, "C"))
HYPOTHESIS = turns((2, 13, "a"), (13, 14, "d"), (14, 20, "b"), (22, 38, "c"), (38, 40, "d"))


def test_der_matches_pyannotes_documented_case():
    count = diarization_error(REFERENCE, HYPOTHESIS, collar=0.0)
    assert count.rate == pytest.approx(0.5161290322580645)
    assert dict(count.parts) == {"confusion": 7.0, "missed detection": 2.0, "false alarm": 7.0}
    assert count.length == 31.0


def test_der_scores_overlap_unless_told_to_skip_it():
    assert diarization_error(OVERLAPPING_REFERENCE, HYPOTHESIS, collar=0.0).length == 34.0
    assert diarization_error(OVERLAPPING_REFERENCE, HYPOTHESIS, collar=0.0, skip_overlap=True).length == 32.0


def test_der_collar_is_the_total_width_around_each_boundary():
    # pyannote bug #16 test: collar=1 removes 0.5 s at each end of a 10 s turn -> total 9
    assert diarization_error(turns((0, 10, "A")), [], collar=1.0).length == 9.0
    assert diarization_error(turns((0, 10, "A")), [], collar=0.0).length == 10.0


def test_der_outside_the_uem_is_not_scored():
    count = diarization_error(turns((0, 10, "A")), turns((0, 20, "x")), collar=0.0, uem=[(0.0, 10.0)])
    assert count.errors == 0.0


# --- one recording, all metrics --------------------------------------------------------------

MEETING = Reference(
    "m",
    (
        TextSegment("alice", "Hello, everyone. [laughter] Let's start.", 0.0, 3.0),
        TextSegment("bob", "Um, thanks Alice!", 3.5, 5.0),
    ),
)


def test_a_perfect_transcript_scores_zero_after_normalisation():
    hypothesis = [
        TextSegment("s1", "hello everyone let's start", 0.1, 3.0),
        TextSegment("s2", "thanks alice", 3.6, 5.0),
    ]
    scores = score_recording(MEETING, hypothesis)
    assert [scores.get(m).rate for m in ("wer", "cpwer", "tcpwer")] == [0.0, 0.0, 0.0]
    assert scores.der is not None and scores.der.rate == 0.0  # 0.1 s late starts: inside ±0.125 s
    strict = score_recording(MEETING, hypothesis, MetricConfig(der_collar=0.0))
    assert strict.der is not None and strict.der.errors == pytest.approx(0.2)


def test_an_empty_transcript_is_100_percent_error_on_every_metric():
    scores = score_recording(MEETING, [])
    assert [scores.get(m).rate for m in ("wer", "der", "cpwer", "tcpwer")] == [1.0, 1.0, 1.0, 1.0]


def test_inverted_hypothesis_times_are_tolerated():
    scores = score_recording(MEETING, [TextSegment("s", "hello everyone let's start", 3.0, 1.0)])
    assert scores.tcpwer is not None and scores.wer is not None


def test_too_many_hypothesis_speakers_leaves_cpwer_out_with_a_reason():
    hypothesis = [TextSegment(f"s{i}", "word", float(i), i + 0.5) for i in range(25)]
    scores = score_recording(MEETING, hypothesis)
    assert scores.cpwer is None and scores.tcpwer is None and scores.wer is not None
    assert any("cpWER not computed" in n and "25 speakers" in n for n in scores.notes)


def test_an_untimed_reference_gives_wer_and_cpwer_only():
    untimed = Reference("m", tuple(TextSegment(s.speaker, s.text) for s in MEETING.segments))
    scores = score_recording(untimed, [TextSegment("x", "hello everyone lets start thanks alice", 0, 5)])
    assert scores.wer is not None and scores.cpwer is not None
    assert scores.tcpwer is None and scores.der is None
    assert len(scores.notes) == 2


def test_the_normaliser_choice_changes_the_score():
    reference = Reference("m", (TextSegment("a", "I won't go", 0.0, 2.0),))
    hypothesis = [TextSegment("x", "I will not go", 0.0, 2.0)]
    assert score_recording(reference, hypothesis, MetricConfig(normalizer="murmur")).wer.rate > 0
    assert score_recording(reference, hypothesis, MetricConfig(normalizer="whisper")).wer.rate == 0


def test_error_counts_add_up_and_empty_lengths_have_no_rate():
    total = ErrorCount(1, 4, (("deletions", 1.0),)) + ErrorCount(2, 0, (("insertions", 2.0),))
    assert (total.errors, total.length, total.rate) == (3, 4, 0.75)
    assert ErrorCount(2, 0).rate is None and pool([None, None]) is None


def test_metric_config_refuses_unknown_normalisers_and_negative_collars():
    with pytest.raises(ValueError, match="normaliser"):
        MetricConfig(normalizer="nope")
    with pytest.raises(ValueError, match="collar"):
        MetricConfig(collar=-1)


# --- what a report says ----------------------------------------------------------------------


def test_each_metric_left_out_is_named_in_the_report_notes():
    untimed = Reference("m", tuple(TextSegment(s.speaker, s.text) for s in MEETING.segments))
    assert score_recording(untimed, []).notes == (
        "tcpWER needs reference times; this reference has none",
        "DER needs timed speaker turns; this reference has none",
    )
    assert score_recording(Reference("m", ()), []).notes == (
        "the reference has no words",
        "DER needs timed speaker turns; this reference has none",
    )
    crowd = [TextSegment(f"s{i}", "word", float(i), i + 0.5) for i in range(25)]
    why = (
        "not computed: Are you sure? Found a total of 25 speakers in the input (Reference: 2, Hypothesis: 25)"
    )
    why += "."
    assert score_recording(MEETING, crowd).notes == (f"cpWER {why}", f"tcpWER {why}")


def test_meetevals_loggers_are_left_as_they_were_after_scoring():
    import logging

    before = {name: (logger.propagate, list(logger.handlers)) for name, logger in _meeteval_loggers()}
    score_recording(MEETING, [TextSegment(f"s{i}", "word", float(i), i + 0.5) for i in range(25)])
    assert {name: (logger.propagate, list(logger.handlers)) for name, logger in _meeteval_loggers()} == before
    assert all(isinstance(logger, logging.Logger) for _, logger in _meeteval_loggers())


def _meeteval_loggers():
    import logging

    from engine.evaluation.metrics import _MEETEVAL_LOGGERS

    return [(name, logging.getLogger(name)) for name in _MEETEVAL_LOGGERS]


def test_right_words_said_30_s_late_pass_cpwer_but_fail_the_time_constrained_metrics():
    late = [
        TextSegment("s1", "hello everyone let's start", 30.0, 33.0),
        TextSegment("s2", "thanks alice", 33.5, 35.0),
    ]
    scores = score_recording(MEETING, late)
    assert (scores.wer.rate, scores.cpwer.rate) == (0.0, 0.0)
    assert scores.tcpwer.rate == 2.0 and scores.der.rate == pytest.approx(2.125)


def test_untimed_hypothesis_lines_are_read_first_and_left_out_of_der():
    reference = Reference("m", (TextSegment("a", "one two", 0.0, 1.0), TextSegment("a", "three", 1.0, 2.0)))
    hypothesis = [TextSegment("x", "three", 1.0, 2.0), TextSegment("x", "one two")]  # no times: first
    assert score_recording(reference, hypothesis).wer.errors == 0.0
    timed = [TextSegment("x", "", 0.0, 2.0)]
    odd = [*timed, TextSegment("y", ""), TextSegment("y", "", 1.0, 1.0)]  # untimed and empty: no turns
    assert diarization_error(turns((0, 2, "a")), odd, collar=0.0) == diarization_error(
        turns((0, 2, "a")), timed, collar=0.0
    )


def test_der_uses_a_quarter_second_collar_by_default_and_scores_only_inside_the_uem():
    assert diarization_error(turns((0, 10, "A")), []).length == 9.75
    scored = diarization_error(
        turns((0, 10, "A")), turns((0, 20, "x")), collar=0.0, uem=[(5.0, 5.0), (0.0, 10.0)]
    )
    assert (scored.errors, scored.length) == (0.0, 10.0)
