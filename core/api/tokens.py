"""My API tokens: list them, make one (its secret answered once), revoke one.

Paths name the token by id; a caller finds only their own (someone else's is a 404). Making a token
takes no Idempotency-Key: a stored answer would be a stored secret, and a retried create costs only
an unused token, which expires or is revoked on the tokens page.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.api.renderers import SECRET_HEADERS
from core.models import ApiToken
from core.roles import acting_user
from core.services.api_tokens import IssuedToken, api_token_create, api_token_revoke

# Anyone signed in manages their own tokens; that they are theirs is the only rule (the queryset and
# the service keep to it). A token needs `full` to make or revoke another (the default for writes).
WRITE_RULES = {
    "api_token_create": WriteRule("create API tokens"),
    "api_token_revoke": WriteRule("revoke API tokens"),
}


class TokenCreateInput(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField(max_length=100, help_text="To tell the token apart, e.g. `nightly ingest`.")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=ApiToken.Scope.choices),
        min_length=1,
        help_text="What the token may do: `ingest`, `freeze-check`, `read`, `full`.",
    )
    expires_in_days = serializers.IntegerField(
        min_value=1,
        max_value=settings.API_TOKEN_MAX_DAYS,
        required=False,
        help_text=f"Default API_TOKEN_DAYS ({settings.API_TOKEN_DAYS}).",
    )


class TokenOutput(serializers.Serializer[ApiToken]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The secret's first 8 characters, to recognise it.")
    scopes = serializers.ListField(child=serializers.CharField())
    status = serializers.ChoiceField(choices=["active", "expired", "revoked"])
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True, help_text="To the minute.")
    revoked_at = serializers.DateTimeField(allow_null=True)


class IssuedTokenOutput(TokenOutput):
    token = serializers.CharField(help_text="The secret: shown this once, stored nowhere in clear.")


def issued(made: IssuedToken) -> dict[str, Any]:
    return {**TokenOutput(made.token).data, "token": made.secret}


def _mine(request: Request) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=acting_user(request))


@extend_schema(tags=["auth"])
class TokenList(generics.ListAPIView[ApiToken]):
    serializer_class = TokenOutput
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["api_token_create"]
    queryset = ApiToken.objects.none()  # tells the schema the model; get_queryset answers

    def get_queryset(self) -> QuerySet[ApiToken]:
        return _mine(self.request).order_by("-created_at", "-pk")

    @extend_schema(summary="List my API tokens, newest first")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Create an API token", request=TokenCreateInput, responses={201: IssuedTokenOutput}
    )
    def post(self, request: Request) -> Response:
        data = TokenCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        made = api_token_create(actor=acting_user(request), **data.validated_data)
        return Response(issued(made), status=status.HTTP_201_CREATED, headers=SECRET_HEADERS)


@extend_schema(tags=["auth"])
class TokenDetail(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["api_token_revoke"]

    @extend_schema(summary="Revoke one of my API tokens", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        api_token_revoke(actor=acting_user(request), token=get_object_or_404(_mine(request), pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
