"""Searching the project: grep and glob (ripgrep), the repo map, the codebase index, and the ignore rules
they share."""
