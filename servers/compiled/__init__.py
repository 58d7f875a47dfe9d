"""A server definition compiled into an immutable Snapshot: its read-only JSON containers
(frozen), what a snapshot holds (snapshot) and the compiler (compile). The per-process cache of
compiled snapshots is servers/snapshot.py."""
