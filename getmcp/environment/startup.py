"""What an entry point writes into its own environment before Django reads the settings: the
settings module's name, and the web process's own default of a declared variable. Writes, not
reads: getmcp/environment/ then reads the variables as declared, and what the operator set wins.
"""

import os

SETTINGS_MODULE = "getmcp.settings"


def name_settings_module() -> None:
    """For every entry point of the package (ASGI, WSGI, `celery -A getmcp`): Django and Celery
    find the settings by this variable, before any setting can be read."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS_MODULE)


def web_process() -> None:
    """The ASGI web process: the settings module, and no persistent Postgres connections
    (Django's advice for ASGI; DATABASE_CONN_MAX_AGE's `shown` says so in the README). Each
    Django request runs its sync code in a thread of its own (asgiref's ThreadSensitiveContext),
    so a connection kept for CONN_MAX_AGE is never reused and stays open until the garbage
    collector finds the dead thread's locals; seen as 75 idle connections from one test server
    once getmcp/gc_policy.py made full collections rare. The MCP path's cold compile reconnects
    (one local round trip); warm calls run no SQL. Workers and commands keep their 60 s."""
    name_settings_module()
    os.environ.setdefault("DATABASE_CONN_MAX_AGE", "0")
