from django.core.management.base import BaseCommand, CommandError, CommandParser

from servers.embeddings import embed_server
from servers.models import Server


class Command(BaseCommand):
    help = (
        "Compute the tool vectors that servers in discovery mode lack (servers/embeddings.py): "
        "every server's, or those of the slugs given. Run it after an upgrade that changes what "
        "a tool's vector is computed from (servers/discovery/vectors.py): until then those "
        "servers are searched by words alone."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slugs", nargs="*", metavar="SLUG")

    def handle(self, *args, **options):
        servers = Server.objects.order_by("pk")
        if options["slugs"]:
            servers = servers.filter(slug__in=options["slugs"])
            missing = set(options["slugs"]) - set(servers.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"no such server: {', '.join(sorted(missing))}")
        total = 0
        # One server at a time, each a bounded job; one whose definition cannot be compiled, or
        # whose discovery is off, computes nothing (embed_server).
        for server_id in servers.values_list("pk", flat=True):
            total += embed_server(server_id)
        self.stdout.write(f"{total} tool vectors computed")
