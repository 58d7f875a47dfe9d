"""Call-log rows into Postgres with COPY: what the drain (drain.py) stores a batch with there.

The whole-system bench (bench/README.md) found the drain to be a quarter of the CPU a call costs
the platform, most of it in the ORM's bulk_create: a model instance per row, each field's value
prepared one by one, then quoted in Python by Django's client-side cursor. COPY hands Postgres
the rows as text, which it parses itself, one row written per call into psycopg's C code.

COPY cannot skip a row whose uid is stored already (a batch stored twice, drain.py), so the rows
go into a temporary table first and on with INSERT ... ON CONFLICT (uid) DO NOTHING, as
bulk_create(ignore_conflicts=True) did. The table lives within the transaction (dropped at its
end, or at commit when an error cut it short), so nothing stays on the connection between
drains (safe behind a transaction-pooling proxy).
"""

import orjson
from django.db import connection

from .models import CallLog

_FIELDS = [f for f in CallLog._meta.concrete_fields if f.attname != "id"]
COLUMNS = [f.column for f in _FIELDS]
# A row without a field gets the model's default, as CallLog(**row) gave it.
_DEFAULTS = [(f.attname, f.get_default()) for f in _FIELDS]
_JSON = {f.attname for f in _FIELDS if f.get_internal_type() == "JSONField"}
_TEMP = "calllog_incoming"
_COLUMN_LIST = ", ".join(f'"{column}"' for column in COLUMNS)


def usable() -> bool:
    """COPY is Postgres's; embedded mode's SQLite goes on with bulk_create."""
    return connection.vendor == "postgresql"


def _values(row: dict) -> tuple:
    values = []
    for attname, default in _DEFAULTS:
        value = row.get(attname, default)
        if attname in _JSON and value is not None:
            # jsonb's text input: the JSON itself (a JSON null is stored as SQL NULL, as the
            # JSONField stored None).
            value = orjson.dumps(value).decode()
        values.append(value)
    return tuple(values)


def insert(rows: list[dict]) -> None:
    """Stores `rows` (drain.py's, with their foreign keys checked), skipping uids already stored.
    Call inside a transaction; raises django.db.DataError for a value Postgres will not take."""
    with connection.cursor() as cursor, connection.wrap_database_errors:
        cursor.execute(
            f"CREATE TEMP TABLE {_TEMP} ON COMMIT DROP AS "
            f"SELECT {_COLUMN_LIST} FROM {CallLog._meta.db_table} WITH NO DATA"
        )
        with cursor.cursor.copy(f"COPY {_TEMP} ({_COLUMN_LIST}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(_values(row))
        cursor.execute(
            f"INSERT INTO {CallLog._meta.db_table} ({_COLUMN_LIST}) "
            f"SELECT {_COLUMN_LIST} FROM {_TEMP} ON CONFLICT (uid) DO NOTHING"
        )
        # Dropped now too: inside an outer transaction (a savepoint) the commit is not ours.
        cursor.execute(f"DROP TABLE {_TEMP}")
