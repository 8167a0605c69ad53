"""docs/architecture.md points at real places: every file or folder it names in backticks exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `metrics/api/observations.py`, `freeze/selectors/`, `templates/work/` (globs and commands left out)
PATH = re.compile(
    r"`((?:config|core|metrics|program|freeze|incidents|work|tests|scripts|templates|docs)/[\w./-]*)`"
)


def test_every_path_the_architecture_page_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = sorted(set(PATH.findall(text)))
    assert len(named) > 50  # the page names the house; an empty match would prove nothing
    missing = [path for path in named if not (ROOT / path).exists()]
    assert missing == []
