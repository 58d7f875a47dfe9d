from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.http import HttpRequest
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from dashboard.views.base import page

from . import throttle
from .forms import LoginForm, ProfileForm, SignUpForm


def _next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        target, {request.get_host()}, require_https=request.is_secure()
    )
    return target if allowed else ""


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest):
    target = _next(request)
    if request.user.is_authenticated:
        return redirect(target or "dashboard:home")
    # An invitation link sends people here with their address filled in (?email=...&next=...).
    form = SignUpForm(request.POST or None, initial={"email": request.GET.get("email", "")})
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, "Welcome! Your personal organization is ready.")
        return redirect(target or "dashboard:home")
    return render(request, "accounts/signup.html", {"form": form, "next": target})


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if getattr(form, "throttled", False):
            response.status_code = 429
        return response


class LogoutView(auth_views.LogoutView):
    next_page = reverse_lazy("accounts:login")


class PasswordResetView(auth_views.PasswordResetView):
    template_name = "accounts/password_reset.html"
    email_template_name = "accounts/email/password_reset.txt"
    subject_template_name = "accounts/email/password_reset_subject.txt"
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form):
        # Over a limit, no mail is sent but the answer is the same "sent" page as always: it
        # must not tell whether the address has an account, nor that anything was held back.
        allowed = throttle.reset_allowed(
            email=form.cleaned_data["email"], address=throttle.source_address(self.request)
        )
        if not allowed:
            return redirect(self.get_success_url())
        return super().form_valid(form)


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_done.html"


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")


class PasswordResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_reset_complete.html"


@login_required
@require_http_methods(["GET", "POST"])
def account_settings(request: HttpRequest):
    profile = ProfileForm(instance=request.user, prefix="profile")
    password = PasswordChangeForm(request.user, prefix="password")
    if request.method == "POST" and "save_profile" in request.POST:
        profile = ProfileForm(request.POST, instance=request.user, prefix="profile")
        if profile.is_valid():
            profile.save()
            messages.success(request, "Profile saved.")
            return redirect("accounts:settings")
    elif request.method == "POST" and "change_password" in request.POST:
        password = PasswordChangeForm(request.user, request.POST, prefix="password")
        if password.is_valid():
            password.save()
            update_session_auth_hash(request, password.user)
            messages.success(request, "Password changed.")
            return redirect("accounts:settings")
    return page(
        request, "accounts/settings.html", {"profile_form": profile, "password_form": password}
    )
