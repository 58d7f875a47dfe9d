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

# Dependencies first, from pyproject.toml alone, so a code change does not reinstall them.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY . .
COPY --from=assets /app/static/vendor /app/static/vendor

RUN useradd --system --home-dir /app --shell /usr/sbin/nologin getmcp \
    && mkdir -p /app/var \
    && chown -R getmcp /app/var
USER getmcp

EXPOSE 8000

CMD ["gunicorn", "getmcp.asgi:application", "-k", "uvicorn.workers.UvicornWorker", \
     "--bind", "0.0.0.0:8000", "--workers", "2", "--access-logfile", "-"]
