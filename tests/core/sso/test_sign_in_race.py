"""Two first sign-ins of one new person at the same moment (two tabs) end with one account, not a 500."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connections

from core.sso import services

CLAIMS = {"sub": "u-7", "preferred_username": "nia", "email": "nia@example.com", "groups": ["rt-team"]}


@pytest.mark.django_db(transaction=True)
def test_the_second_of_two_simultaneous_first_sign_ins_finds_the_account_the_first_made(monkeypatch):
    create_user = User.objects.create_user
    raced = []

    def other_tab_first(*args, **kwargs):
        """The other sign-in commits the same account between this one's look-up and its insert."""
        if not raced:
            raced.append(True)
            thread = threading.Thread(target=lambda: (create_user(username="nia"), connections.close_all()))
            thread.start()
            thread.join()
        return create_user(*args, **kwargs)

    monkeypatch.setattr(User.objects, "create_user", other_tab_first)
    user = services.user_sign_in_sync(claims=CLAIMS)
    assert raced and User.objects.filter(username="nia").count() == 1
    assert user.username == "nia" and user.email == "nia@example.com"
    assert set(user.groups.values_list("name", flat=True)) == {"rt-team"}
