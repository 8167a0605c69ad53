"""Settings for benchmarks/http_reads.py only: the app's settings plus a URLconf with a bare DRF view.

The bare view is the benchmark's yardstick; the app does not ship it.
"""

from config.settings.base import *  # noqa: F403

DEBUG = False
ROOT_URLCONF = "reads_urls"
