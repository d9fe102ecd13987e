"""Agent CLIs (Claude Code, Codex) as discogym agents: where they are installed and how to run them headless."""
