from django.contrib.auth.middleware import LoginRequiredMiddleware


class PageLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Pages redirect anonymous users to the login page; the API answers 401 through DRF instead."""

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
