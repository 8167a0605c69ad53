"""core.sso.services.user_groups_sync: the one way a sign-in changes a user's groups, audited."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from core.models import Transition
from core.roles import PROGRAM_LEADS, group_names
from core.sso.services import GROUPS_SYNCED, GroupsChange, user_groups_sync
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_sync_adds_and_removes_to_match_and_writes_one_audit_row():
    user = make_user("sam", PROGRAM_LEADS, "old-team")
    change = user_groups_sync(
        user=user, groups=frozenset({"new-team", "training-platform"}), keep=frozenset(), reason="why"
    )
    assert change == GroupsChange(
        added=("new-team", "training-platform"), removed=("old-team", PROGRAM_LEADS)
    )
    user.refresh_from_db()
    assert group_names(user) == {"new-team", "training-platform"}
    [row] = Transition.objects.filter(action=GROUPS_SYNCED, object_id=user.pk)
    assert row.data == {"added": ["new-team", "training-platform"], "removed": ["old-team", PROGRAM_LEADS]}
    assert row.reason == "why"
    assert Group.objects.filter(name="new-team").exists()  # created on the way


def test_sync_that_changes_nothing_writes_nothing():
    user = make_user("tess", "team-a")
    change = user_groups_sync(user=user, groups=frozenset({"team-a"}), keep=frozenset(), reason="why")
    assert change == GroupsChange(added=(), removed=())
    assert not Transition.objects.filter(action=GROUPS_SYNCED).exists()


def test_local_only_groups_are_kept_and_never_granted():
    user = make_user("uma", "break-glass")
    user_groups_sync(
        user=user,
        groups=frozenset({"team-a", "auditors"}),
        keep=frozenset({"break-glass", "auditors"}),
        reason="",
    )
    assert set(user.groups.values_list("name", flat=True)) == {"break-glass", "team-a"}
