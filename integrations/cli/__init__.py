"""Subcommands of `manage.py server` that reach outside the platform (importers, the doctor);
servers.cli.SUBCOMMANDS names them by module path."""
