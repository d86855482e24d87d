"""`murmur serve`: one engine per GPU box, its batch shared by every client over HTTP.

    app.py      the OpenAI-compatible FastAPI app (models, health, metrics; admission of uploads)
    routes_audio.py  /v1/audio/transcriptions and /translations: a job per upload, its answer
    params.py   the form fields, checked (unknown ones refused by name)
    decoding.py a request's language / prompt / temperature / task on the backend, or a 400
    events.py   a job's events as one client's stream shows them
    openai_errors.py  OpenAI's error object
    server.py   the loaded backend, the job registry and the shared decode loop
    jobs.py     one job per upload: its pipeline thread and its event list (SSE)
    fair.py     the fair multi-job `WorkSource` feeding the one decode loop
    shared.py   that decode loop, and the backend each job's pipeline calls (VibeVoice)
    whisper_batch.py   whisper's shared calls: every job's clips from the fair source
    whisper_shared.py  the whisper backend each job's pipeline calls
    realtime.py, realtime_session.py   WS /v1/realtime: live audio in, lines out
    upload.py   streamed multipart uploads with a size cap and a deadline per piece
    length.py   an upload's length, measured by decoding it (stopping at the limit)
    notices.py  the warnings a job's thread logs, handed to its client
    connections.py  uvicorn's h11 protocol with a connection cap and a deadline for silent clients
    lines.py    each chunk's lines, streamed once final
    formats.py  json, verbose_json, text, srt, vtt
    config.py, auth.py, metrics.py, ray_app.py
"""
