from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PROGRAM_LEADS, has_role


def roles(request):
    """Role flags for templates, so pages show only the actions a person may take."""
    user = request.user
    return {
        "is_program_lead": has_role(user, PROGRAM_LEADS),
        "is_framework_engineer": has_role(user, FRAMEWORK_ENGINEERS),
        "is_metric_owner": has_role(user, METRIC_OWNERS),
    }
