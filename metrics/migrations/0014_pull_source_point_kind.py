"""A pull source says what one point of its query is: one sample, or an aggregate over an interval.

Existing sources become `aggregate`: what a query_range point is unless the query reads a raw gauge
(the rate(), avg() and histogram_quantile() queries sources are written with). Those feeding a
per_request, per_step or per_run definition thus show as disagreeing on the metric page, and
comparisons that pool their rows say so, until an owner declares `sample` (PATCH point_kind); an
edit of such a source is refused until then. Pulling goes on meanwhile: nothing stops silently.
"""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('metrics', '0013_otlp_streams_and_histogram_points'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='pullsource',
            name='point_kind',
            field=models.CharField(choices=[('sample', 'one sample'), ('aggregate', 'an aggregate over an interval')], default='aggregate', max_length=10),
        ),
        migrations.AddConstraint(
            model_name='pullsource',
            constraint=models.CheckConstraint(condition=models.Q(('point_kind__in', ['sample', 'aggregate'])), name='pullsource_point_kind_known'),
        ),
    ]
