from django.apps import apps
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from vault import crypto

# Every stored column encrypted with SECRETS_KEYS (vault/crypto.py), as "app.Model": fields.
# Named by label, not imported: vault sits below the apps that use its keys. A new encrypted
# column belongs here, or rotating the keys leaves it readable only by a retired key.
ENCRYPTED = {
    "vault.Secret": ("ciphertext", "test_ciphertext"),
    "sso.Connection": ("client_secret_ciphertext",),  # the OpenID provider's client secret
    "connections.Provider": ("client_secret_ciphertext",),  # a connected-account provider's
    "connections.Connection": ("access_token_ciphertext", "refresh_token_ciphertext"),
    # The pair a refresh token was exchanged for, kept for the grace window (oauth/tokens.py);
    # MultiFernet.rotate keeps the value's own timestamp, so the window does not restart.
    "oauth.RefreshToken": ("successor",),
}


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored secret (vault secrets, SSO client secrets, connected-account "
        "provider secrets and tokens, OAuth successor pairs) with the newest key in SECRETS_KEYS."
    )

    def handle(self, *args, **options):
        done = 0
        failed = []
        with transaction.atomic():
            for label, fields in ENCRYPTED.items():
                model = apps.get_model(label)
                for row in model.objects.select_for_update().order_by("pk"):
                    changed = []
                    try:
                        for field in fields:
                            value = getattr(row, field)
                            if value:  # empty or None: nothing stored
                                setattr(row, field, crypto.reencrypt(value))
                                changed.append(field)
                    except crypto.SecretUnreadable:
                        failed.append(_describe(label, row))
                        continue
                    if changed:
                        row.save(update_fields=changed)
                        done += 1
        self.stdout.write(f"Re-encrypted {done} secret(s) with the newest key.")
        if failed:
            raise CommandError(
                f"{len(failed)} secret(s) no configured key can decrypt: {', '.join(failed)}"
            )


def _describe(label: str, row) -> str:
    """Names the row without its value: a vault secret by name and organization, others by id."""
    if label == "vault.Secret":
        return f"{row.name} (organization {row.organization_id})"
    return f"{label} {row.pk}"
