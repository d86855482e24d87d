"""Evaluation: metrics, datasets, a synthetic corpus, system runs, benchmark sweeps, attention sparsity.

- `normalize`: text normalisation (the paper's Appendix D by default, Whisper's as an option);
- `reference`, `manifest`, `datasets`: test sets on disk (manifest files; AMI, TED-LIUM, Earnings-21);
- `corpus`: a synthetic long-form corpus with exact references (`murmur synth-corpus`);
- `metrics`: WER (jiwer), cpWER and tcpWER (meeteval), DER (pyannote.metrics) of one recording;
- `systems`, `runner`, `report`: named system configurations, running one over a manifest
  (`murmur eval`), per-recording and pooled results;
- `bench`, `tables`, `plots`: sweeps of systems, the paper's comparison table and plots
  (`murmur bench`);
- `sparsity`: the attention sparsity profiler of the paper's §2.3.

Modules import their heavy dependencies (jiwer, meeteval, pyannote, matplotlib, torch) lazily.
"""
