"""POST /otlp/v1/metrics: the OTLP/HTTP metrics receiver (protobuf or JSON, optionally gzip).

Auth is an API token with the `ingest` scope, sent as `Authorization: Token …` or `Bearer …` (what OTel
exporters' header settings produce), with the batch endpoint's ingest permission. The body goes to the ingest service
as it came (metrics.ingest). The answer is an ExportMetricsServiceResponse in the request's content
type; rejected points are counted in its partial_success. Errors (401, 403, 400, 413, 415) keep the
API's one error shape in JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from core.api.errors import PayloadTooLarge
from core.api.parsers import RawBodyParser
from core.api.permissions import RoleRequired
from core.api.token_auth import ApiTokenAuthentication
from core.idempotency import IDEMPOTENCY_KEY, REPLAY_HEADER, idempotency_key
from core.roles import acting_user
from metrics.api import WRITE_RULES
from metrics.ingest import observations_ingest_otlp
from metrics.ingest.formats import otlp

if TYPE_CHECKING:
    pass


class JsonErrorsOnly(BaseContentNegotiation):
    """Exporters send `Accept: */*` or a protobuf type; errors are rendered as JSON either way, and the
    success answer is written by the view in the request's own type."""

    # DRF hands both a list (APIView.get_parsers, get_renderers); its stubs say any Iterable, which
    # cannot be indexed: hence the `override` ignores.
    def select_parser(self, request: Request, parsers: Sequence[BaseParser]) -> BaseParser:  # type: ignore[override]
        return parsers[0]

    def select_renderer(
        self,
        request: Request,
        renderers: Sequence[BaseRenderer],  # type: ignore[override]
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], renderers[0].media_type


class PartialSuccessOutput(serializers.Serializer[dict[str, Any]]):
    rejectedDataPoints = serializers.CharField(help_text="int64, as the protobuf JSON mapping writes it.")
    errorMessage = serializers.CharField()


class ExportMetricsOutput(serializers.Serializer[dict[str, Any]]):
    partialSuccess = PartialSuccessOutput(required=False, help_text="Only when points were rejected.")


@extend_schema(
    tags=["metrics"],
    summary="Receive OTLP/HTTP metrics",
    request={"application/x-protobuf": OpenApiTypes.BINARY, "application/json": OpenApiTypes.OBJECT},
    parameters=[IDEMPOTENCY_KEY],
    responses={
        (200, "application/json"): ExportMetricsOutput,
        (200, "application/x-protobuf"): OpenApiTypes.BINARY,
    },
)
class OtlpMetricsReceiver(APIView):
    """An ExportMetricsServiceRequest; gauge and sum points (cumulative ones as deltas) are stored as
    observations, histogram points as their buckets. Points that break an ingest rule or disagree with
    their definition's sampling are counted in partial_success, the rest stored."""

    authentication_classes = [ApiTokenAuthentication]
    content_negotiation_class = JsonErrorsOnly
    parser_classes = [RawBodyParser]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["observations_ingest_otlp"]
    token_scope = "ingest"

    def post(self, request: Request) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit:
            raise PayloadTooLarge(f"The body exceeds {limit:,} bytes; export smaller batches.")
        content_type = request.content_type or ""
        result = observations_ingest_otlp(
            body=request.data if isinstance(request.data, bytes) else b"",
            content_type=content_type,
            content_encoding=request.headers.get("Content-Encoding", ""),
            actor=acting_user(request),  # RoleRequired lets only a signed-in user write
            client=request.headers.get("User-Agent", ""),
            idempotency_key=idempotency_key(request),
        )
        payload, media_type = otlp.response_encode(len(result.rejected), result.error_message, content_type)
        response = HttpResponse(payload, content_type=media_type, status=200)
        if result.replayed:
            response[REPLAY_HEADER] = "true"
        return response
