# syntax=docker/dockerfile:1
# One image for the five President services and the web edge; the command picks it:
#   python -m president.services.{dealer,table,timer,scoring,gateway,web}.main
# and `python -m president.servicekit.healthcheck HOST:PORT` is the gRPC health
# probe for container health checks. See deploy/README.md.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# PyICU (account names' look-alike check) builds against the system's ICU.
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ pkg-config libicu-dev \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/president
WORKDIR /src
COPY pyproject.toml ./
COPY libs ./libs
COPY gen ./gen
# president-client, which the server depends on by path: its wheel takes the client's
# files from libs/ and gen/ (clients/python/hatch_build.py), the server's leaves them out.
COPY clients/python ./clients/python
RUN /opt/president/bin/pip install . \
 && /opt/president/bin/python -c "import president.servicekit.healthcheck, president.services.dealer.main, president.rules.game, president.client"

FROM ${PYTHON_IMAGE}
# ICU's runtime library, the version libicu-dev depends on in this image's Debian.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        $(apt-cache depends libicu-dev | awk '/Depends: libicu[0-9]/ {print $2}') \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 president \
 && useradd --system --uid 10001 --gid president --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin president \
 && install -d -o president -g president /var/lib/president
# The operator's signing key (deploy/README.md): a volume mounted here starts
# owned by the service user, so `president operator-key` can make the key in it.
RUN install -d -m 0700 -o president -g president /var/lib/president/keys
COPY --from=build /opt/president /opt/president
# The web edge's static site (PRESIDENT_WEB_STATIC_DIR).
COPY web/public /opt/president/web/public
ENV PATH=/opt/president/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PRESIDENT_HOST=0.0.0.0 \
    PRESIDENT_METRICS_PORT=9100 \
    PRESIDENT_WEB_STATIC_DIR=/opt/president/web/public \
    PRESIDENT_METRICS_HOST=0.0.0.0
WORKDIR /var/lib/president
USER 10001:10001
# gRPC: gateway 50051, table 50052, dealer 50053, timer 50054, scoring 50055;
# the web edge's HTTP on 8080; Prometheus metrics on 9100.
EXPOSE 50051 50052 50053 50054 50055 8080 9100
STOPSIGNAL SIGTERM
CMD ["python", "-m", "president.services.gateway.main"]
