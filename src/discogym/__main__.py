"""``python -m discogym`` runs the CLI."""

from discogym.interfaces.cli import main

main()
