"""Cached token lookups (core.api.token_auth): a hit costs no query, and every change that could make
the cached user, groups or permissions wrong is seen by the very next request."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIRequestFactory

from core.api.token_auth import CachedTokenAuthentication, entry_key
from core.roles import group_names
from tests.conftest import make_user

pytestmark = pytest.mark.django_db
ME = "/api/v1/auth/me/"
ADD_OBSERVATION = "metrics.add_observation"


def authenticate(key: str):
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Token {key}")
    return CachedTokenAuthentication().authenticate(request)[0]


def me(client, key: str):
    return client.get(ME, HTTP_AUTHORIZATION=f"Token {key}")


@pytest.fixture
def token(db):
    return Token.objects.create(user=make_user("reader", "team-a")).key


def test_a_cached_lookup_runs_no_query_and_carries_groups_and_permissions(token, django_assert_num_queries):
    first = authenticate(token)
    assert first.username == "reader"
    with django_assert_num_queries(0):
        again = authenticate(token)
        assert again.username == "reader" and again.is_active
        assert not again.has_perm(ADD_OBSERVATION)
    with django_assert_num_queries(0):
        assert group_names(authenticate(token)) == {"team-a"}


def test_the_cache_key_is_a_digest_not_the_token(token):
    authenticate(token)
    assert cache.get(entry_key(token)) is not None
    assert token not in entry_key(token)


def test_a_deleted_token_is_refused_by_the_next_request(client, token):
    assert me(client, token).status_code == 200
    assert client.delete(ME, HTTP_AUTHORIZATION=f"Token {token}").status_code == 204
    assert me(client, token).status_code == 401


def test_a_rotated_token_stops_working_and_the_new_one_works(client, token):
    assert me(client, token).status_code == 200
    user = Token.objects.get(key=token).user
    Token.objects.filter(key=token).delete()
    fresh = Token.objects.create(user=user).key
    assert me(client, token).status_code == 401
    assert me(client, fresh).json()["username"] == "reader"


def test_a_deactivated_user_is_refused_by_the_next_request(client, token):
    assert me(client, token).status_code == 200
    user = Token.objects.get(key=token).user
    user.is_active = False
    user.save()
    assert me(client, token).status_code == 401


def test_a_renamed_user_is_seen_by_the_next_request(client, token):
    assert me(client, token).json()["username"] == "reader"
    user = Token.objects.get(key=token).user
    user.username = "reader2"
    user.save(update_fields=["username"])
    assert me(client, token).json()["username"] == "reader2"


def test_group_membership_changes_are_seen_by_the_next_request(client, token):
    user = Token.objects.get(key=token).user
    assert me(client, token).json()["groups"] == ["team-a"]
    user.groups.add(Group.objects.get_or_create(name="program-leads")[0])
    assert me(client, token).json()["groups"] == ["program-leads", "team-a"]
    user.groups.remove(Group.objects.get(name="team-a"))
    assert me(client, token).json()["groups"] == ["program-leads"]
    user.groups.clear()
    assert me(client, token).json()["groups"] == []


def test_a_renamed_or_deleted_group_is_seen_by_the_next_request(client, token):
    assert me(client, token).json()["groups"] == ["team-a"]
    group = Group.objects.get(name="team-a")
    group.name = "team-b"
    group.save()
    assert me(client, token).json()["groups"] == ["team-b"]
    group.delete()
    assert me(client, token).json()["groups"] == []


def test_direct_permission_changes_are_seen_by_the_next_lookup(token):
    user = Token.objects.get(key=token).user
    permission = Permission.objects.get(content_type__app_label="metrics", codename="add_observation")
    assert not authenticate(token).has_perm(ADD_OBSERVATION)
    user.user_permissions.add(permission)
    assert authenticate(token).has_perm(ADD_OBSERVATION)
    user.user_permissions.remove(permission)
    assert not authenticate(token).has_perm(ADD_OBSERVATION)


def test_group_permission_changes_are_seen_by_the_next_lookup(token):
    group = Group.objects.get(name="team-a")
    permission = Permission.objects.get(content_type__app_label="metrics", codename="add_observation")
    assert not authenticate(token).has_perm(ADD_OBSERVATION)
    group.permissions.add(permission)
    assert authenticate(token).has_perm(ADD_OBSERVATION)
    group.permissions.clear()
    assert not authenticate(token).has_perm(ADD_OBSERVATION)


def test_a_deleted_user_is_refused(token):
    authenticate(token)
    Token.objects.get(key=token).user.delete()
    with pytest.raises(AuthenticationFailed):
        authenticate(token)


def test_a_sign_in_keeps_the_cache(client, token, django_assert_num_queries):
    """update_last_login saves only last_login, which nothing cached depends on."""
    from django.contrib.auth.models import update_last_login

    authenticate(token)
    update_last_login(None, Token.objects.get(key=token).user)
    with django_assert_num_queries(0):
        authenticate(token)


def test_the_generation_is_replaced_again_after_commit(token, django_capture_on_commit_callbacks):
    """A reader between the immediate bump and the commit may cache the old rows under the new
    generation; the bump after commit makes that entry stale too."""
    from core.api.token_auth import GENERATION_KEY

    user = Token.objects.get(key=token).user
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        user.is_active = False
        user.save()
    before_commit = cache.get(GENERATION_KEY)
    for callback in callbacks:
        callback()
    assert cache.get(GENERATION_KEY) != before_commit


def test_an_unreachable_cache_falls_back_to_the_database(token, monkeypatch, django_assert_num_queries):
    from redis.exceptions import ConnectionError as RedisConnectionError

    def refuse(*args, **kwargs):
        raise RedisConnectionError("cache down")

    for name in ("get", "get_many", "set", "add"):
        monkeypatch.setattr(cache, name, refuse)
    assert authenticate(token).username == "reader"


def test_unknown_tokens_are_refused_and_not_cached():
    with pytest.raises(AuthenticationFailed):
        authenticate("0" * 40)
    assert cache.get(entry_key("0" * 40)) is None
