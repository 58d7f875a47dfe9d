"""Gives the organization of bench-echo-quota a monthly call quota far above what a run calls, so
every call is charged (one Lua script in Redis) and none is refused. Run by
bench/system_side.py with DJANGO_SETTINGS_MODULE and the benchmark's database."""

import django

django.setup()

from servers.models import Server  # noqa: E402

QUOTA = 1_000_000_000

organization = Server.objects.get(slug="bench-echo-quota").organization
organization.monthly_call_quota = QUOTA
organization.save(update_fields=["monthly_call_quota"])
print(organization.pk)
