"""What both web apps are built on: a FastAPI app with no API docs, the pages' templates and static files, the
guard's checks (:mod:`discogym.interfaces.web.guard`), every refusal as one clear message, and each suite's screen
scripts."""

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from discogym import __version__
from discogym.core import all_suites
from discogym.interfaces.web.guard import SmallerLimit, guard
from discogym.interfaces.web.study import shortened

HERE = Path(__file__).resolve().parent


class Page(Protocol):
    """Renders a page: ``page(request, "name.html", status=200, **context)``."""

    def __call__(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse: ...


def web_app(
    title: str,
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]],
    hosts: list[str],
    *,
    inner: Callable[[FastAPI], None] = lambda app: None,
    outer: Callable[[FastAPI], None] = lambda app: None,
    smaller: SmallerLimit = lambda scope: None,
    filters: dict[str, Callable[..., Any]] | None = None,
    shown: Callable[[object], str] = str,
    **page_context: Any,
) -> tuple[FastAPI, Page]:
    """A web app answering requests for ``hosts`` and the function that renders its pages (with ``page_context``
    and the template ``filters``). ``inner`` adds the middleware that runs inside the guard's checks, ``outer``
    the middleware around them; ``smaller`` gives the requests whose bodies have a smaller limit (guard.BodyLimit);
    ``shown`` turns a refusal's detail into the message shown."""
    # FastAPI's OpenTelemetry off: its spans would carry a participant's secret (their page's address) to whatever
    # collector the environment names, and its check of the providers took 2% of a busy study server
    off = {"tracing": False, "metrics": False, "logs": False}
    docs = {"docs_url": None, "redoc_url": None, "openapi_url": None}
    app = FastAPI(title=title, version=__version__, lifespan=lifespan, telemetry=off, **docs)  # type: ignore[arg-type]
    templates = Jinja2Templates(directory=HERE / "templates")
    templates.env.filters.update(filters or {})
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    inner(app)
    guard(app, hosts, smaller)
    outer(app)

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context = {"version": __version__, "status": status, **page_context, **context}
        return templates.TemplateResponse(request, name, context, status_code=status)

    handle_refusals(app, page, shown)
    serve_screens(app)
    return app, page


def handle_refusals(app: FastAPI, page: Page, shown: Callable[[object], str] = str) -> None:
    """Every refusal as one clear message (``shown`` of its detail): JSON for the pages' calls (``/api/``), an error
    page otherwise; a malformed request says what is wrong in it, shortened."""

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, err: StarletteHTTPException) -> Response:
        message = shown(err.detail)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=err.status_code)
        return page(request, "error.html", status=err.status_code, message=message)

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, err: RequestValidationError) -> Response:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        return await refused(request, StarletteHTTPException(422, f"malformed request: {shortened(problems, 300)}"))


def serve_screens(app: FastAPI) -> None:
    """Serve each suite's screen scripts at ``/screens/KIND.js`` (:meth:`Suite.web_screens`)."""

    @app.get("/screens/{kind}.js")
    def screen(kind: str) -> FileResponse:
        for suite in all_suites():
            script = suite.web_screens().get(kind)
            if script is not None:
                return FileResponse(script, media_type="text/javascript")
        raise HTTPException(404, f"no suite draws a screen of kind {shortened(kind)}")


__all__ = ["Page", "handle_refusals", "serve_screens", "web_app"]
