from django.urls import path
from rest_framework.routers import SimpleRouter

from metrics import api
from metrics.api import sources

router = SimpleRouter()
router.register("systems", api.SystemViewSet, basename="system")
router.register("workloads", api.WorkloadViewSet, basename="workload")

urlpatterns = [
    *router.urls,
    path("definitions/", api.DefinitionListCreate.as_view(), name="definition-list"),
    path("definitions/<slug:key>/", api.DefinitionDetail.as_view(), name="definition-detail"),
    path("definitions/<slug:key>/versions/", api.DefinitionVersions.as_view(), name="definition-versions"),
    path("definitions/<slug:key>/versions/<int:version>/", api.DefinitionVersionDetail.as_view()),
    path("definitions/<slug:key>/versions/<int:version>/activate/", api.DefinitionActivate.as_view()),
    path("definitions/<slug:key>/versions/<int:version>/deprecate/", api.DefinitionDeprecate.as_view()),
    path("observations/", api.ObservationList.as_view(), name="observation-list"),
    path("observations/export/", api.ObservationExport.as_view(), name="observation-export"),
    path("observations/batch/", api.ObservationBatch.as_view(), name="observation-batch"),
    path("pull-sources/", sources.PullSourceList.as_view(), name="pull-source-list"),
    path("pull-sources/<int:id>/", sources.PullSourceDetail.as_view(), name="pull-source-detail"),
    path("comparisons/", api.ComparisonView.as_view(), name="comparison"),
    path("comparisons/export/", api.ComparisonExport.as_view(), name="comparison-export"),
]
