"""A server's settings form."""

import re

from django import forms

from servers.models import SLUG_RE, Server

from ..agent_fields import AgentSettingsFields

ORIGIN_RE = re.compile(r"^https?://[^/\s?#]+$")
# Dashboard paths under /servers/ that a server slug would shadow.
RESERVED_SLUGS = {"new"}


class ServerForm(AgentSettingsFields, forms.ModelForm):
    allowed_origins = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "code"}),
        help_text="One per line, like https://app.example.com. Browsers on other origins are "
        "refused; clients without an Origin header (Claude, Cursor, SDKs) are not affected.",
    )
    slug = forms.RegexField(
        regex=SLUG_RE,
        max_length=63,
        help_text="Part of the endpoint URL: lowercase letters, digits and dashes.",
        error_messages={
            "invalid": "Use 2-63 lowercase letters, digits and dashes, starting with a letter "
            "or digit."
        },
    )

    class Meta:
        model = Server
        fields = ["name", "slug", "title", "instructions", "auth_mode", "status", "allowed_origins"]
        widgets = {"instructions": forms.Textarea(attrs={"rows": 4})}
        help_texts = {
            "name": "Shown to clients as serverInfo.name.",
            "instructions": "Optional guidance sent to the model when a client connects.",
            "auth_mode": "API key: clients send Authorization: Bearer <key>. OAuth: people "
            "sign in to getmcp from their client (claude.ai, ChatGPT, Claude Desktop) and "
            "consent. None: anyone with the URL can call it.",
            "status": "Paused answers 503; a draft answers no client (your organization's keys are told it is a draft).",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["allowed_origins"] = "\n".join(self.instance.allowed_origins or [])
        if not self.is_bound:
            self.initial_agent_settings(self.instance.agents)

    def save(self, commit=True):
        self.instance.agents = self.agent_settings(self.cleaned_data, self.instance.agents)
        return super().save(commit)

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if slug in RESERVED_SLUGS:
            raise forms.ValidationError(f"“{slug}” is reserved; pick another slug.")
        # Slugs are global (they are the endpoint URL), so the owner may be another organization.
        if Server.objects.filter(slug=slug).exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(f"“{slug}” is taken; pick another slug.")
        return slug

    def clean_allowed_origins(self):
        origins = [
            line.strip().rstrip("/") for line in self.cleaned_data["allowed_origins"].split()
        ]
        bad = [o for o in origins if o and not ORIGIN_RE.match(o)]
        if bad:
            raise forms.ValidationError(
                f"Not an origin: {', '.join(bad)}. Use scheme and host only, like "
                "https://app.example.com."
            )
        return [o for o in origins if o]
