"""The template loader is strict: a broken template fails when loaded, naming where it is broken."""

from __future__ import annotations

import copy

import pytest

from program.blueprints import BlueprintError, blueprint_keys, blueprint_load, blueprint_slots
from program.blueprints.schema import blueprint_check


@pytest.mark.parametrize("key", blueprint_keys())
def test_every_shipped_template_loads(key):
    blueprint = blueprint_load(key)
    assert blueprint["key"] == key


def test_rebuild_14m_names_its_slots_with_suggestions_and_descriptions():
    slots = {s.name: s for s in blueprint_slots(blueprint_load("rebuild-14m"))}
    assert set(slots) == {
        "throughput",
        "step_time",
        "scaling_efficiency",
        "canary_workload",
        "large_workload",
    }
    assert slots["throughput"].kind == "metric" and slots["throughput"].suggested == "training-throughput"
    assert (
        slots["large_workload"].kind == "workload" and slots["large_workload"].suggested == "llm-pretrain-70b"
    )
    assert all(s.description for s in slots.values())


def broken(change) -> dict:
    data = copy.deepcopy(blueprint_load("rebuild-14m"))
    change(data)
    return data


def canary_criterion(data) -> dict:
    return data["phases"][1]["exit_gate"]["criteria"][0]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: canary_criterion(d).update(metric_slot="thruput"), "criteria[0].metric_slot: 'thruput'"),
        (lambda d: canary_criterion(d).update(workload_slot="tiny"), "criteria[0].workload_slot: 'tiny'"),
        # A workload slot is not a metric slot, and the other way round.
        (lambda d: canary_criterion(d).update(metric_slot="canary_workload"), "is not a metric slot"),
        (lambda d: canary_criterion(d).update(workload_slot="throughput"), "is not a workload slot"),
        (lambda d: canary_criterion(d).update(metric="training-throughput"), "unknown field(s) metric"),
        (lambda d: canary_criterion(d).pop("metric_slot"), "needs a metric_slot"),
        (lambda d: canary_criterion(d).pop("threshold"), "criteria[0].threshold"),
        (lambda d: canary_criterion(d).update(operator="≈"), "criteria[0].operator"),
        (lambda d: canary_criterion(d).update(min_samples=1), "criteria[0].min_samples"),
        (
            lambda d: d["phases"][1]["exit_gate"]["criteria"][2].update(metric_slot="throughput"),
            "a manual criterion is attested",
        ),
        (lambda d: d["slots"]["metrics"]["throughput"].pop("description"), "missing field(s) description"),
        (
            lambda d: d["slots"]["workloads"].update(throughput=d["slots"]["metrics"]["throughput"]),
            "used once",
        ),
        (
            lambda d: d["slots"]["metrics"].update({"Bad Name": {"suggested": "x", "description": "y"}}),
            "snake",
        ),
        (lambda d: d["phases"][3].update(months=[13, 15]), "phases[3].months[1]"),
        (lambda d: d["phases"][0]["milestones"][0].update(month=0), "milestones[0].month"),
        (lambda d: d["phases"][0].update(kind="beta"), "phases[0].kind"),
        (lambda d: d.update(key="other"), "key: is 'other'"),
        (lambda d: d.update(extra=1), "unknown field(s) extra"),
        # The rounds slot names a declared metric slot (incidents' program-rounds-per-day reads it).
        (lambda d: d.update(rounds_slot="steps"), "rounds_slot: 'steps' is not a metric slot"),
        (lambda d: d.update(rounds_slot="canary_workload"), "rounds_slot: 'canary_workload'"),
    ],
)
def test_a_broken_template_is_an_error_naming_where(change, where):
    with pytest.raises(BlueprintError) as error:
        blueprint_check(broken(change), key="rebuild-14m")
    assert where in str(error.value)
    assert str(error.value).startswith("Template rebuild-14m: ")


def test_an_unknown_slot_in_a_template_file_fails_at_load(tmp_path, monkeypatch):
    import program.blueprints as blueprints

    text = (
        (blueprints.FOLDER / "rebuild-14m.yaml")
        .read_text()
        .replace("metric_slot: step_time", "metric_slot: steps")
    )
    (tmp_path / "rebuild-14m.yaml").write_text(text)
    monkeypatch.setattr(blueprints, "FOLDER", tmp_path)
    blueprint_load.cache_clear()
    try:
        with pytest.raises(BlueprintError, match="'steps' is not a metric slot"):
            blueprint_load("rebuild-14m")
    finally:
        blueprint_load.cache_clear()
