import pytest

from tests.metrics.factories import reference_data
from tests.metrics.inference_samples import sorted_sample


@pytest.fixture
def ref(db):
    """legacy/rebuilt systems, two workloads and an active latency definition (see factories)."""
    return reference_data()


@pytest.fixture(scope="module")
def pair():
    """Two sorted lognormal samples of 2,000, the candidate's a little higher (the inference tests)."""
    return sorted_sample(1, 2000), sorted_sample(2, 2000, 5.65, 0.45)
