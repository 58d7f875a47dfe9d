from django.urls import path

from . import invitation_views, views

app_name = "accounts"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("password-reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("password-reset/sent/", views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("reset/done/", views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("account/", views.account_settings, name="settings"),
    path("invitations/", invitation_views.invitation_list, name="invitations"),
    path(
        "invitations/<int:pk>/accept/",
        invitation_views.invitation_answer,
        {"answer": "accept"},
        name="invitation_accept",
    ),
    path(
        "invitations/<int:pk>/decline/",
        invitation_views.invitation_answer,
        {"answer": "decline"},
        name="invitation_decline",
    ),
    path("invitations/<str:token>/", invitation_views.invitation, name="invitation"),
]
