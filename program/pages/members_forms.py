"""The Members page's forms: add a user or a group with a role; change a member's role. What is
allowed is program.services.memberships' to say (one user or one group, a known role, the last lead
kept); these only turn names into rows, so that an unknown name is that field's error."""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import Group, User

from program.models import ProgramMembership

ROLE_HELP = (
    "Lead: acts on the program and manages its members. Engineer: records migrations. Viewer: reads it."
)


class AddMemberForm(forms.Form):
    user = forms.ModelChoiceField(
        queryset=User.objects.filter(is_active=True),
        to_field_name="username",
        required=False,
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}
        ),
        label="User",
        help_text="A username.",
        error_messages={"invalid_choice": "Unknown user “%(value)s”."},
    )
    group = forms.ModelChoiceField(
        queryset=Group.objects.all(),
        to_field_name="name",
        required=False,
        widget=forms.TextInput(attrs={"list": "member-groups", "autocomplete": "off"}),
        label="or a group (team)",
        help_text="Every member of the group holds the role.",
        error_messages={"invalid_choice": "Unknown group “%(value)s”."},
    )
    # The least a new member can hold, so that a hurried click grants no lead.
    role = forms.ChoiceField(
        choices=ProgramMembership.Role.choices, initial=ProgramMembership.Role.VIEWER, help_text=ROLE_HELP
    )


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=ProgramMembership.Role.choices)
