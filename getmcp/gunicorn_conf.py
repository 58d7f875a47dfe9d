"""gunicorn settings for the web image (`gunicorn -c python:getmcp.gunicorn_conf ...`).

Several workers share their Prometheus metrics through PROMETHEUS_MULTIPROC_DIR
(observability/multiproc.py): the master prepares the directory before forking any worker, and
forgets a worker's live gauges when it exits.
"""

from observability import multiproc


def on_starting(server) -> None:
    multiproc.prepare(server.cfg.workers)


def child_exit(server, worker) -> None:
    if multiproc.directory():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def on_exit(server) -> None:
    # Only a directory prepare() made itself (a temporary one) is removed.
    multiproc.cleanup(multiproc.directory())
