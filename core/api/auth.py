"""Signing in for a token, and who the caller is.

`POST /api/v1/auth/token/` makes a new token each time (core/services/api_tokens.py) and answers its
secret, the only time it is shown. Its answer is not kept for Idempotency-Key replays, as the other
creates are: storing it would store the secret.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import ANY_SCOPE
from core.api.renderers import SECRET_HEADERS
from core.api.throttling import TokenLoginThrottle
from core.api.tokens import IssuedTokenOutput, TokenCreateInput, issued
from core.errors import ApplicationError
from core.models import ApiToken
from core.roles import acting_user, group_names
from core.services.api_tokens import api_token_create, api_token_revoke

MSG_BAD_CREDENTIALS = "Unable to log in with provided credentials."
MSG_NO_TOKEN = (
    "This request carries no API token to revoke (it is signed in by session); "
    "revoke a token with DELETE /api/v1/tokens/{id}/."
)
DEFAULT_NAME = "API token"


class LockedOut(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_detail = "Too many failed sign-ins for this account from this address; try again later."
    default_code = "locked_out"


class TokenObtainInput(TokenCreateInput):
    username = serializers.CharField()
    password = serializers.CharField(trim_whitespace=False, style={"input_type": "password"})
    name = serializers.CharField(max_length=100, default=DEFAULT_NAME, help_text=f'Default "{DEFAULT_NAME}".')
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=ApiToken.Scope.choices),
        default=[ApiToken.Scope.FULL],
        help_text="Default `full`; give only what the script needs (`ingest`, `freeze-check`, `read`).",
    )


@extend_schema(tags=["auth"], summary="Exchange username and password for a new API token")
class TokenObtainView(APIView):
    """POST {"username", "password", "name"?, "scopes"?, "expires_in_days"?} → a new token, shown once.
    Each call makes another token; failed attempts count towards the login lockout."""

    permission_classes = [AllowAny]
    authentication_classes: list[type[BaseAuthentication]] = []
    throttle_classes = [TokenLoginThrottle]

    @extend_schema(request=TokenObtainInput, responses=IssuedTokenOutput)
    def post(self, request: Request) -> Response:
        data = TokenObtainInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        # django-axes flags the DRF request, which its middleware never sees: answer the lockout here,
        # as the login page does, rather than as a wrong password.
        user = authenticate(request=request, username=values["username"], password=values["password"])
        if getattr(request, "axes_locked_out", False):
            raise LockedOut()
        if user is None:
            raise exceptions.ValidationError(
                {"non_field_errors": [MSG_BAD_CREDENTIALS]}, code="authorization"
            )
        made = api_token_create(
            actor=user,
            name=values["name"],
            scopes=values["scopes"],
            expires_in_days=values.get("expires_in_days"),
        )
        # 200, as before tokens could be many: scripts written for the old endpoint check for it.
        return Response(issued(made), headers=SECRET_HEADERS)


class MeOutput(serializers.Serializer[dict[str, Any]]):
    username = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())


@extend_schema(tags=["auth"])
class MeView(APIView):
    """Who the caller is and which groups (roles, teams) they belong to; DELETE revokes their token."""

    # Any token may end itself, whatever its scopes.
    token_scope = {"DELETE": ANY_SCOPE}

    @extend_schema(summary="Show who the caller is", responses=MeOutput)
    def get(self, request: Request) -> Response:
        user = request.user
        return Response({"username": user.username, "groups": sorted(group_names(user))})

    @extend_schema(summary="Revoke the API token this request is made with", responses={204: None})
    def delete(self, request: Request) -> Response:
        if not isinstance(request.auth, ApiToken):
            raise ApplicationError(MSG_NO_TOKEN, status=400, field="Authorization")
        api_token_revoke(actor=acting_user(request), token=request.auth, reason="revoked by its own request")
        return Response(status=status.HTTP_204_NO_CONTENT)
