"""GET /api/v1/freeze/windows/{id}/history/: a window's history (levels set, moves), newest first."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers

from core.models import Transition
from freeze import policies
from freeze.history import HistoryEntry, entry, window_transitions
from freeze.models import FreezeWindow


class WindowHistoryEntryOutput(serializers.Serializer[HistoryEntry]):
    at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True, help_text="Username; null when the system acted.")
    action = serializers.CharField(help_text="created, moved or level (more may come).")
    component = serializers.CharField(allow_null=True, help_text="Component key, for a level change.")
    # "from" is a Python keyword: declared through the class namespace.
    locals()["from"] = serializers.CharField(source="from_state", allow_blank=True)
    to = serializers.CharField(source="to_state", allow_blank=True)
    reason = serializers.CharField(allow_blank=True)
    text = serializers.CharField(help_text="The entry in words, as the freeze page shows it.")


@extend_schema(tags=["freeze"], responses=WindowHistoryEntryOutput(many=True))
class WindowHistory(generics.ListAPIView[Transition]):
    """Anyone who may read the window's program: who set which level, when the window moved, and why; paginated."""

    # It serializes the page's HistoryEntry objects (paginate_queryset), not the Transition rows; DRF's
    # stubs tie the serializer and the page to the queryset's model.
    serializer_class = WindowHistoryEntryOutput  # type: ignore[assignment]

    def get_queryset(self) -> QuerySet[Transition]:
        if getattr(self, "swagger_fake_view", False):  # schema generation: no window to read
            return Transition.objects.none()
        self.window = get_object_or_404(FreezeWindow.objects.select_related("program"), pk=self.kwargs["pk"])
        policies.require_read_window(self.request.user, self.window, f"freeze window {self.window.pk}")
        return window_transitions(self.window)

    def paginate_queryset(self, queryset: QuerySet[Transition]) -> list[HistoryEntry] | None:  # type: ignore[override]
        page = super().paginate_queryset(queryset)
        return None if page is None else [entry(record, self.window) for record in page]
