"""Program templates are YAML files in this folder: adding a template is adding a file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

FOLDER = Path(__file__).resolve().parent


@lru_cache(maxsize=16)
def blueprint_load(key: str) -> dict:
    path = FOLDER / f"{key}.yaml"
    if not key.replace("-", "").isalnum() or not path.exists():
        raise KeyError(key)
    return yaml.safe_load(path.read_text())


def blueprint_keys() -> list[str]:
    return sorted(path.stem for path in FOLDER.glob("*.yaml"))
