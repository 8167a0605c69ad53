"""The program page, gate page and gate API run a constant number of queries whatever the data size."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from program import services
from program.models import Gate, Phase
from tests.program.factories import make_program, metrics_for_template, observe, spread


def count(client, path) -> int:
    client.get(path)  # warm process-wide caches
    with CaptureQueriesContext(connection) as context:
        response = client.get(path)
    assert response.status_code == 200
    return len(context.captured_queries)


def grow(ref, lead, size: int) -> None:
    cutover = Phase.objects.get(kind="cutover")
    for i in range(size):
        gate = services.gate_add(
            actor=lead,
            phase=cutover,
            name=f"milestone {size}-{i}",
            kind="milestone",
            due_date=cutover.planned_end,
        )
        for j in range(3):
            services.criterion_add(
                actor=lead,
                gate=gate,
                name=f"c{j}",
                kind="relative",
                metric=ref["throughput"],
                threshold=0.8,
                workload=ref["medium"],
            )
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100, 40 * size), tag=f"{size}-")
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(95, 40 * size), tag=f"{size}-")
    target = Gate.objects.get(name="New reaches 80% of old on the canary workloads")
    services.gate_evaluate(gate=target)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["program page", "gate page", "gate api", "program api", "program list"])
def test_constant_queries(client, lead, kind):
    ref = metrics_for_template()
    program = make_program(lead)
    client.force_login(lead)
    gate = Gate.objects.get(name="New reaches 80% of old on the canary workloads")
    path = {
        "program page": f"/programs/{program.slug}/",
        "gate page": f"/programs/gates/{gate.pk}/",
        "gate api": f"/api/v1/gates/{gate.pk}/",
        "program api": f"/api/v1/programs/{program.slug}/",
        "program list": "/programs/",
    }[kind]
    grow(ref, lead, 1)
    small = count(client, path)
    grow(ref, lead, 12)
    services.criterion_add(actor=lead, gate=gate, name="extra", kind="manual")
    services.gate_evaluate(gate=gate)
    large = count(client, path)
    assert large == small, f"{kind}: {small} queries on small data, {large} on large"
    # 17: the gate page's freeze panels read the approved exceptions touching its metrics and, since
    # issue 26 item 9, the expected impacts of those that ran (freeze.gate_notices), one query each;
    # since issue 31 the pinned metrics' versions and whether each has rows are two queries (one index
    # probe per version, each on one shard on Citus: metrics.selectors.series_presence), not a join.
    assert small <= 17
