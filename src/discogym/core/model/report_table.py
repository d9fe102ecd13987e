"""The table a suite's report is made of (:meth:`Suite.tables`); its helpers are in
:mod:`discogym.core.reporting.report_tables`."""

from typing import Any

from pydantic import BaseModel, Field


class ReportTable(BaseModel):
    """A titled table; cells are plain JSON values."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    notes: list[str] = Field(default_factory=list)
