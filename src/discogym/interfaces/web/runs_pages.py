"""The runs app's pages of the runs folder: the runs, each run's episodes with filters, an episode's replay, a run's
report and plots, and a study's dashboard.

Every file read is inside the runs folder: run folders and episode names are checked against what the folder holds,
never joined blindly onto a path, and a file whose real path (links followed) is outside the folder is not read.
"""

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse
from pydantic import ValidationError

from discogym.core import Episode, UserError, all_suites
from discogym.core.reporting.run_report import find_runs
from discogym.core.running.storage import RunDir
from discogym.interfaces.web.browse import EpisodeIndex, ReportCache, ViewCache, replay_steps
from discogym.interfaces.web.dashboard import is_study_folder, study_dashboard
from discogym.interfaces.web.site import Page


def plot_files(folder: Path, runs: Path) -> list[Path]:
    """The PNG plots ``discogym report`` drew into the run's ``plots`` folder (those whose real path, links
    followed, is inside ``runs``)."""
    plots = folder / "plots"
    return sorted(path for path in plots.glob("*.png") if inside(path, runs)) if plots.is_dir() else []


def inside(path: Path, runs: Path) -> bool:
    """True when ``path``, its symbolic links followed, is inside the (resolved) runs folder."""
    try:
        return path.resolve(strict=True).is_relative_to(runs)
    except (OSError, RuntimeError):  # missing, or a loop of links
        return False


def relative_to(text: object, runs: Path) -> str:
    """``text`` with the runs folder's absolute path left out of every path it names (pages show no absolute
    path: ``RUNS/x`` as ``x``)."""
    return str(text).replace(f"{runs}/", "").replace(str(runs), ".")


def damage(name: str, err: ValidationError) -> str:
    """One line saying why the episode file ``name`` did not validate (never the file's content)."""
    first = err.errors()[0]
    if first["type"] == "json_invalid":
        return f"episode file {name} is damaged: it is not valid JSON"
    where = ".".join(map(str, first["loc"])) or "the file"
    return f"episode file {name} is damaged: not an episode ({err.error_count()} problems; {where}: {first['msg']})"


class RunsFolder:
    """The runs folder as the pages read it: its runs and their episodes, checked against what it holds."""

    def __init__(self, runs: Path) -> None:
        self.runs = runs
        self.index = EpisodeIndex()

    def run_folder(self, run: str) -> Path:
        """The run folder named ``run`` (a path relative to the runs folder, as listed), or 404."""
        for folder in find_runs(self.runs) if self.runs.is_dir() else []:
            if folder.relative_to(self.runs).as_posix() == run and inside(folder, self.runs):
                return folder
        raise HTTPException(404, f"no run {run!r} in the runs folder")

    def episode_path(self, run: str, stem: str) -> Path:
        """The file of the run's episode ``stem`` (as listed), or 404."""
        run_dir = RunDir(self.run_folder(run))
        path = run_dir.episodes_dir / f"{stem}.json"
        if path not in run_dir.episode_paths() or not inside(path, self.runs):
            raise HTTPException(404, f"run {run!r} has no episode {stem!r}")
        return path

    def episode(self, run: str, stem: str) -> tuple[Path, Episode]:
        """The run's episode ``stem`` and its file, or 404, or 422 saying in one line why the file is damaged."""
        path = self.episode_path(run, stem)
        try:
            return path, self.index.episode(path)
        except ValidationError as err:
            raise HTTPException(422, damage(path.name, err)) from None
        except OSError as err:
            raise HTTPException(422, f"episode file {path.name} cannot be read: {err.strerror or err}") from None


def runs_routes(folder: RunsFolder, page: Page) -> APIRouter:
    """The pages of the runs folder."""
    router = APIRouter()
    runs = folder.runs
    reports = ReportCache()
    views = ViewCache()

    @router.get("/", response_class=HTMLResponse)
    def home(request: Request) -> HTMLResponse:
        found = find_runs(runs) if runs.is_dir() else []
        listed = [(run.relative_to(runs).as_posix(), len(RunDir(run).episode_paths())) for run in found]
        return page(request, "home.html", runs=listed, root=runs.name, suites=all_suites(), study=is_study_folder(runs))

    @router.get("/study", response_class=HTMLResponse)
    def study_page(request: Request) -> HTMLResponse:
        """The dashboard of the study whose folder is the runs folder (``discogym serve --runs STUDY_DIR``)."""
        if not is_study_folder(runs):
            raise HTTPException(404, "the runs folder is not a study's folder (discogym serve --study ... --out)")
        try:
            shown = study_dashboard(runs)
        except UserError as err:
            raise HTTPException(422, str(err)) from None
        return page(request, "study_dashboard.html", **shown)

    @router.get("/runs/{run:path}/episodes/{stem}", response_class=HTMLResponse)
    def episode(request: Request, run: str, stem: str) -> HTMLResponse:
        _, loaded = folder.episode(run, stem)
        views_url = f"/api/runs/{quote(run)}/episodes/{quote(stem)}/views"
        steps = replay_steps(loaded)
        return page(request, "episode.html", run=run, stem=stem, episode=loaded, steps=steps, views_url=views_url)

    @router.get("/api/runs/{run:path}/episodes/{stem}/views")
    def episode_views(run: str, stem: str) -> dict[str, Any]:
        """The view at the start and after each step, for the replay's screen (fetched after the page shows)."""
        path, loaded = folder.episode(run, stem)
        try:
            return views.views(path, loaded)
        except UserError as err:  # e.g. a suite this installation does not have
            raise HTTPException(404, str(err)) from None

    @router.get("/runs/{run:path}/plots/{name}")
    def plot(run: str, name: str) -> FileResponse:
        plots = {path.name: path for path in plot_files(folder.run_folder(run), runs)}
        if name not in plots:
            raise HTTPException(404, f"run {run!r} has no plot {name!r}")
        return FileResponse(plots[name], media_type="image/png")

    @router.get("/report/{run:path}", response_class=HTMLResponse)
    def report(request: Request, run: str) -> HTMLResponse:
        run_folder = folder.run_folder(run)
        try:
            built = reports.report(run_folder)
        except UserError as err:
            raise HTTPException(404, str(err)) from None
        plots = [path.name for path in plot_files(run_folder, runs)]
        return page(request, "report.html", run=run, report=built, plots=plots)

    @router.get("/runs/{run:path}", response_class=HTMLResponse)
    def run_page(
        request: Request, run: str, suite: str = "", task: str = "", agent: str = "", model: str = "", outcome: str = ""
    ) -> HTMLResponse:
        damaged: list[str] = []
        rows = folder.index.rows(RunDir(folder.run_folder(run)), damaged)
        wanted = {"suite": suite, "task": task, "agent": agent, "model": model, "outcome": outcome}
        shown = [row for row in rows if row.matches(wanted)]
        choices = {name: sorted({str(getattr(row, name)) for row in rows}) for name in wanted}
        return page(
            request, "run.html", run=run, rows=shown, total=len(rows), wanted=wanted, choices=choices, damaged=damaged
        )

    return router


__all__ = ["RunsFolder", "inside", "relative_to", "runs_routes"]
