from __future__ import annotations

import pytest

from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def ref(db, lead):
    """The template's systems, workloads and metrics, with a program the lead owns.

    Modules that need more (observations, a calibrated gate) define their own `ref`, which takes precedence.
    """
    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    return ref
