"""`{{ when|ago }}`: "just now" for the last minute, else Django's timesince with "ago".

Django's timesince counts whole minutes, so a key used seconds ago read "0 minutes ago"."""

from datetime import timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()

JUST_NOW = timedelta(minutes=1)


@register.filter
def ago(value, now=None) -> str:
    if not value:
        return ""
    now = now or timezone.now()
    if now - value < JUST_NOW:
        return "just now"
    return f"{timesince(value, now)} ago"
