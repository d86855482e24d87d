"""Errors as OpenAI's API writes them: `{"error": {"message", "type", "param", "code"}}`.

`ApiError(status, message, kind, param=, code=, headers=)` is raised anywhere in a request and
answered by the handlers `install_error_handlers` adds, as are FastAPI's own (unknown route 404,
wrong method 405, invalid form 400) and any unexpected exception (500, no details). The types
and codes are OpenAI's: a missing key is 401 `invalid_request_error`, a wrong one adds the code
`invalid_api_key`; an unknown route is 404 `invalid_request_error` ("Invalid URL (GET /x)"); an
unknown model 404 `model_not_found` on `param` "model"; a bad parameter 400 names it in `param`
(code `invalid_value`, or `unknown_parameter` / `unsupported_parameter` / `unsupported_value`); a
full server 429 `requests` / `rate_limit_exceeded`; a failure 500 `server_error`.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

INVALID = "invalid_request_error"
RETRY_AFTER = 5  # seconds a client told 429 or 503 waits before trying again


class ApiError(Exception):
    """An answer other than 200, in OpenAI's error shape."""

    def __init__(
        self, status: int, message: str, kind: str = INVALID, *, param: str | None = None,
        code: str | None = None, headers: dict[str, str] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind
        self.param, self.code, self.headers = param, code, headers or {}

    def response(self) -> JSONResponse:
        body = error_body(self.message, self.kind, self.param, self.code)
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def error_body(message: str, kind: str = INVALID, param: str | None = None,
               code: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def bad_parameter(param: str, message: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, param=param, code=code)


def busy(message: str) -> ApiError:
    """429: as many jobs as the server takes are active."""
    return ApiError(429, message, "requests", code="rate_limit_exceeded",
                    headers={"Retry-After": str(RETRY_AFTER)})  # fmt: skip


def unauthorized(header: str | None) -> ApiError:
    """401 as OpenAI words it: no key at all, or an incorrect one."""
    if not header:
        message = ("You didn't provide an API key. You need to provide your API key in an Authorization "
                   "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")  # fmt: skip
        return ApiError(401, message, headers={"WWW-Authenticate": "Bearer"})
    return ApiError(401, "Incorrect API key provided.", code="invalid_api_key",
                    headers={"WWW-Authenticate": "Bearer"})  # fmt: skip


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code in (404, 405):
            message = f"Invalid URL ({request.method} {request.url.path})"
        else:
            message = str(exc.detail)
        return ApiError(exc.status_code, message, headers=dict(exc.headers or {})).response()

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return ApiError(400, "the request is not valid").response()

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> JSONResponse:
        return ApiError(500, "the server failed on this request", "server_error").response()
