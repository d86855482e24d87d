"""`murmur serve`: one engine per GPU box, its batch shared by every client over HTTP.

    app.py      the OpenAI-compatible FastAPI app (transcriptions, models, health, metrics)
    server.py   the loaded backend, the job registry and the shared decode loop
    jobs.py     one job per upload: its pipeline thread and its event list (SSE)
    fair.py     the fair multi-job `WorkSource` feeding the one decode loop
    shared.py   that decode loop, and the backend each job's pipeline calls
    upload.py   streamed multipart uploads with a size cap and a deadline per piece
    length.py   an upload's length, measured by decoding it (stopping at the limit)
    notices.py  the warnings a job's thread logs, handed to its client
    connections.py  uvicorn's h11 protocol with a connection cap and a deadline for silent clients
    lines.py    each chunk's lines, streamed once final
    formats.py  json, verbose_json, text, srt, vtt
    config.py, auth.py, metrics.py, ray_app.py
"""
