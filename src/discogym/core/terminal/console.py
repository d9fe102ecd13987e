"""What every command-line entry point shares: one-line errors, exit codes, the JSON document on stdout.

The ``discogym`` command and the suites' own sub-commands (``discogym petri ...``) use these, so every
command fails and prints the same way.
"""

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from discogym.core.model.errors import UserError

EXIT_USER_ERROR = 2
EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130

# Off a terminal (a pipe, a file) there is no width to fit: tables keep every cell whole instead of Rich's
# default 80 columns, which cut and wrapped them.
PIPE_WIDTH = 10_000

# Nothing printed is read as rich markup: paths, task ids and error bodies from endpoints are printed as they
# are (``runs/x[/b]y`` once raised MarkupError and stopped a run). Style goes through :func:`styled`.
stderr = Console(stderr=True, soft_wrap=True, markup=False)
stdout = Console(markup=False) if sys.stdout.isatty() else Console(width=PIPE_WIDTH, markup=False)

JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout and nothing else.")]


def styled(label: str, style: str, text: str) -> Text:
    """``label`` in a rich ``style`` (e.g. ``"bold red"``), a space, then ``text`` exactly as it is (never read
    as markup)."""
    return Text.assemble((label, style), " ", text)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 episode``, ``2 episodes`` (``many`` for a plural that is not ``word + "s"``)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def fail(message: str, code: int = EXIT_USER_ERROR) -> NoReturn:
    """Print one clear line on stderr and exit with ``code``."""
    stderr.print(styled("error:", "bold red", message), highlight=False)
    raise typer.Exit(code)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a UserError (or a file-system error) into one line on stderr and a non-zero exit."""
    try:
        yield
    except UserError as err:
        fail(str(err))
    except OSError as err:  # an unwritable --out, an unreadable file named on the command line
        fail(f"{err.filename or 'file system'}: {err.strerror or err}")
    except ValidationError as err:  # options that passed the parser but not the run's data model
        problem = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        fail(f"{where}: {problem['msg']}")


def print_json(document: Any) -> None:
    """Write ``document`` as the single JSON document on stdout."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=True) + "\n")
