"""Regenerate the tool reference in README.md from the registry: python scripts/update_tools_table.py"""

from __future__ import annotations

import re
from pathlib import Path

from hdsp_agent.tools.defaults import default_tools
from hdsp_agent.tools.definitions import to_markdown

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"(<!-- tools:begin -->\n)(.*?)(<!-- tools:end -->)", re.S)

if __name__ == "__main__":
    text = README.read_text()
    README.write_text(BLOCK.sub(lambda m: m.group(1) + to_markdown(default_tools()) + m.group(3), text))
    print("README.md tool table updated")
