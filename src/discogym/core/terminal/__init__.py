"""What the terminal shows and reads, shared by the command line and the suites' own commands: console
helpers (JSON output, styled messages) and the human player's line syntax."""
