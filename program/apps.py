from django.apps import AppConfig


def _program_choices() -> list[tuple[str, str]]:
    from program.models import Program

    return list(Program.objects.order_by("slug").values_list("slug", "name"))


class ProgramConfig(AppConfig):
    name = "program"

    def ready(self) -> None:
        from core.programs import program_directory_register
        from program import receivers  # noqa: F401 - connects the metrics hooks
        from program.policies import hidden_program_slugs, led_program_slugs

        # core names programs (webhook scopes) and asks who leads them without importing this app.
        program_directory_register(_program_choices, led=led_program_slugs, hidden=hidden_program_slugs)
