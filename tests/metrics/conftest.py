import pytest

from tests.metrics.factories import reference_data


@pytest.fixture
def ref(db):
    """legacy/rebuilt systems, two workloads and an active latency definition (see factories)."""
    return reference_data()
