"""The comparison page's tag filters, group-by select and small multiples (server-rendered)."""

from __future__ import annotations

import random

import pytest

from tests.metrics.test_comparison_slicing import add

PAGE = "/metrics/compare/?metric=latency&baseline=legacy&candidate=rebuilt&statistic=mean"


@pytest.fixture
def tagged(ref):
    rng = random.Random(3)
    for system, centres in (("legacy", {"sev1": 1.0, "sev2": 2.0}), ("rebuilt", {"sev1": 1.5, "sev2": 1.0})):
        for severity, centre in centres.items():
            add(
                ref,
                system,
                [rng.gauss(centre, 0.1) for _ in range(40)],
                tags={"severity": severity},
                prefix=severity,
            )
    add(ref, "rebuilt", [1.0] * 40, workload="large", tags={"severity": "sev2"}, prefix="large")
    return ref


def test_group_by_shows_one_card_per_group_and_the_pooling_warning(client, viewer, tagged):
    client.force_login(viewer)
    html = client.get(PAGE + "&group_by=severity").content.decode()
    assert html.count('class="card group-card"') == 2
    assert 'data-group="sev1"' in html and 'data-group="sev2"' in html
    assert "pools workloads of different sizes (large: pretrain; medium: finetune)" in html
    assert '<option value="severity" selected>severity</option>' in html  # offered from the recent rows


def test_tag_text_box_filters_like_the_api_parameters(client, viewer, tagged):
    client.force_login(viewer)
    from_box = client.get(PAGE + "&tags=severity%3Dsev1&workload=finetune").content.decode()
    from_link = client.get(PAGE + "&tags.severity=sev1&workload=finetune").content.decode()
    assert "severity = sev1" in from_box and '<td class="num">40</td>' in from_box
    assert 'value="severity=sev1"' in from_link  # the link's parameters fill the text box
    assert from_box.count('<td class="num">40</td>') == from_link.count('<td class="num">40</td>') == 2


def test_bad_tag_text_names_the_field(client, viewer, tagged):
    client.force_login(viewer)
    html = client.get(PAGE + "&tags=severity").content.decode()
    assert 'role="alert"' in html
    assert "tags: &#x27;severity&#x27; is not key=value" in html
    too_long = client.get(PAGE + "&tags=severity%3D" + "x" * 300).content.decode()
    assert "tags.severity: severity: a value is 300 characters; the limit is 256." in too_long
