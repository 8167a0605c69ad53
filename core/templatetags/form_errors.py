"""{% load form_errors %}: `|field_anchor`, the id an error summary's link points at: the field's own
input, or for a widget without one (a split date and time, a list of checkboxes) its first input."""

from __future__ import annotations

from django import forms, template
from django.forms.boundfield import BoundField

register = template.Library()


@register.filter
def field_anchor(field: BoundField) -> str:
    own = field.id_for_label
    if own:
        return str(own)
    widget = field.field.widget
    if isinstance(widget, forms.MultiWidget | forms.RadioSelect | forms.CheckboxSelectMultiple):
        return f"{field.auto_id}_0"  # Django numbers the inputs of such widgets from 0
    return str(field.auto_id or "")
