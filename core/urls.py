from django.contrib.auth import views as auth_views
from django.urls import path

from core import views, views_inbox

urlpatterns = [
    path("notifications/", views_inbox.notification_list, name="notifications"),
    path("notifications/read-all/", views_inbox.notifications_read_all, name="notifications-read-all"),
    path("notifications/<int:pk>/open/", views_inbox.notification_open, name="notification-open"),
    path("notifications/<int:pk>/read/", views_inbox.notification_read, name="notification-read"),
    path("healthz", views.healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
