"""`murmur serve`: one engine per GPU box, its batch shared by every client over HTTP.

    app.py      the OpenAI-compatible FastAPI app (transcriptions, models, health, metrics)
    server.py   the loaded backend, the job registry and the shared decode loop
    jobs.py     one job per upload: its pipeline thread and its event list (SSE)
    fair.py     the fair multi-job `WorkSource` feeding the one decode loop
    shared.py   that decode loop, and the backend each job's pipeline calls (VibeVoice)
    whisper_batch.py   whisper's shared calls: every job's clips from the fair source
    whisper_shared.py  the whisper backend each job's pipeline calls
    realtime.py, realtime_session.py   WS /v1/realtime: live audio in, lines out
    upload.py   streamed multipart uploads with a size cap
    lines.py    each chunk's lines, streamed once final
    formats.py  json, verbose_json, text, srt, vtt
    config.py, auth.py, metrics.py, ray_app.py
"""
