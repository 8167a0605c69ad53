"""core.services.model_update: sets what changed, says what changed, writes only that, or nothing."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from core.services.model_update import model_update
from metrics.models import RollupStale
from tests.metrics.factories import reference_data

pytestmark = pytest.mark.django_db


def test_it_returns_the_changed_fields_and_saves_only_them(django_assert_num_queries):
    ref = reference_data()
    mark = RollupStale.objects.create(
        definition_id=ref["latency"].pk, workload_id=ref["medium"].pk, day=date(2026, 11, 1)
    )
    stamped = mark.marked_at
    data = {"day": date(2026, 11, 2), "workload_id": ref["medium"].pk, "ignored": 1}

    with django_assert_num_queries(1) as captured:
        changed = model_update(instance=mark, fields=["workload_id", "day"], data=data)

    assert changed == ["day"]
    mark.refresh_from_db()
    assert mark.day == date(2026, 11, 2)
    assert mark.marked_at >= stamped  # auto_now fields are written with the change (the SQL below)
    update = captured.captured_queries[0]["sql"]
    assert '"day"' in update and '"marked_at"' in update and '"workload_id"' not in update


def test_nothing_changed_writes_nothing_and_save_false_leaves_saving_to_the_caller(django_assert_num_queries):
    ref = reference_data()
    day = date(2026, 11, 1)
    mark = RollupStale.objects.create(definition_id=ref["latency"].pk, workload_id=ref["medium"].pk, day=day)
    with django_assert_num_queries(0):
        assert model_update(instance=mark, fields=["day"], data={"day": day}) == []
        assert model_update(
            instance=mark, fields=["day"], data={"day": day + timedelta(days=1)}, save=False
        ) == ["day"]
    assert mark.day == day + timedelta(days=1)
    mark.refresh_from_db()
    assert mark.day == day
