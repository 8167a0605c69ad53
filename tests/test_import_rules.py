"""The house's import rules, read from the code itself (ast), not from a list kept by hand:

- metrics shows the other apps one face: program, freeze, incidents and work import `metrics.models`
  and `metrics.public`, nothing else of metrics (docs/architecture.md);
- an app imports only the apps below it: core ← metrics ← program ← freeze ← incidents ← work."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["core", "metrics", "program", "freeze", "incidents", "work"]
METRICS_FACE = {"metrics.models", "metrics.public"}


def imports_of(app: str, root: Path = ROOT) -> list[tuple[str, int, str]]:
    """(file, line, imported module) for every import in the app's code, migrations left out.
    `from metrics import ingest` counts as importing metrics.ingest."""
    found = []
    for path in sorted((root / app).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top_level = "." not in node.module
                names = [f"{node.module}.{a.name}" for a in node.names] if top_level else [node.module]
            else:
                continue
            found += [(str(path.relative_to(root)), node.lineno, name) for name in names]
    return found


def test_other_apps_import_only_the_public_face_of_metrics():
    wrong = [
        f"{file}:{line} imports {name}"
        for app in ("program", "freeze", "incidents", "work")
        for file, line, name in imports_of(app)
        if name.split(".")[0] == "metrics"
        and name != "metrics"
        and not any(name == face or name.startswith(face + ".") for face in METRICS_FACE)
    ]
    assert wrong == []


def test_an_app_imports_only_the_apps_below_it():
    wrong = [
        f"{file}:{line} imports {name}"
        for position, app in enumerate(ORDER)
        for file, line, name in imports_of(app)
        if name.split(".")[0] in ORDER[position + 1 :]
    ]
    assert wrong == []


def test_the_rule_reader_sees_an_import_of_metrics_internals(tmp_path):
    """A reader that found nothing would pass the tests above whatever the code did."""
    (tmp_path / "program").mkdir()
    (tmp_path / "program" / "x.py").write_text(
        "from metrics import ingest\nfrom metrics.rollups.read import Window\nfrom metrics.public import judge\n"
        "def later():\n    import metrics.inference\n"
    )
    names = [name for _, _, name in imports_of("program", root=tmp_path)]
    assert sorted(names) == ["metrics.inference", "metrics.ingest", "metrics.public", "metrics.rollups.read"]
