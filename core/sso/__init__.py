"""Single sign-on with OpenID Connect (mozilla-django-oidc), one job a module:

- `provider.py`: whether SSO is configured, and the provider's endpoints (discovery, fetched once);
- `claims.py`: pure claim mapping — the username, the provider's groups, the Django groups they mean;
- `services.py`: the sign-in's writes — create or update the user, keep their groups in step (audited);
- `backend.py`: the authentication backends (the OIDC code exchange; the switch for password sign-in);
- `pages.py` and `urls.py`: the login page, the /oidc/ views, and the page a failed sign-in lands on;
- `errors.py`: why a sign-in failed, in words the failure page shows;
- `checks.py`: configuration mistakes reported at start-up (Django's system checks).
"""
