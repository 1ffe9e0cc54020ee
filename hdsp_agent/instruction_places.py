"""Where a project's rules and instruction files live: what the rules loader (``tools/builtin/rules.py``)
reads into every system prompt, and so what the protected paths (``permissions/protected.py``) and the OS
sandbox (``sandbox/protect.py``) keep from being written unasked. One list for all three: a file the loader
reads but the protection misses would be a way to instruct every later conversation."""

from __future__ import annotations

from pathlib import Path

RULES_DIR = Path(".hdsp") / "rules"
RULE_DIRS = (RULES_DIR, Path(".continue") / "rules")
# Instructions people already keep at the project root for other agents: read as rules that always apply.
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")
