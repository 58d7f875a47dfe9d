# The getmcp application image: web (gunicorn + uvicorn workers), Celery worker and beat.

# The dashboard's code editor (Ace) and YAML parser, from npm, at the versions scripts/assets.sh pins.
FROM node:20-slim AS assets
WORKDIR /app
COPY scripts/assets.sh scripts/assets.sh
RUN scripts/assets.sh

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app

WORKDIR /app

# Dependencies first, pinned by the lock file (`make lock` writes it from pyproject.toml), so a
# code change does not reinstall them and every build installs the same versions.
COPY requirements.lock ./
RUN pip install -r requirements.lock

COPY . .
COPY --from=assets /app/static/vendor /app/static/vendor

RUN useradd --system --home-dir /app --shell /usr/sbin/nologin getmcp \
    && mkdir -p /app/var \
    && chown -R getmcp /app/var
USER getmcp

EXPOSE 8000

# gunicorn reads its worker count from WEB_CONCURRENCY (docker-compose.yml passes it too).
ENV WEB_CONCURRENCY=2
CMD ["gunicorn", "getmcp.asgi:application", "-c", "python:getmcp.gunicorn_conf", \
     "-k", "getmcp.http_protocol.UvicornWorker", \
     "--bind", "0.0.0.0:8000", "--access-logfile", "-"]
