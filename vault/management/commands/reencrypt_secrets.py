from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from vault import crypto
from vault.models import Secret


class Command(BaseCommand):
    help = "Re-encrypt every secret with the newest key in SECRETS_KEYS (after adding a key)."

    def handle(self, *args, **options):
        done = 0
        failed = []
        with transaction.atomic():
            for secret in Secret.objects.select_for_update().order_by("pk"):
                try:
                    secret.ciphertext = crypto.reencrypt(secret.ciphertext)
                    if secret.test_ciphertext:
                        secret.test_ciphertext = crypto.reencrypt(secret.test_ciphertext)
                except crypto.SecretUnreadable:
                    failed.append(secret)
                    continue
                secret.save(update_fields=["ciphertext", "test_ciphertext"])
                done += 1
        self.stdout.write(f"Re-encrypted {done} secret(s) with the newest key.")
        if failed:
            names = ", ".join(f"{s.name} (organization {s.organization_id})" for s in failed)
            raise CommandError(f"{len(failed)} secret(s) no configured key can decrypt: {names}")
