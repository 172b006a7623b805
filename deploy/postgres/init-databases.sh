#!/bin/sh
# The President databases, one per owner, so that only the dealer's role can
# read deal secrets:
#   president          events and consumer tracking   role president
#   president_dealer   the dealer's secrets            role president_dealer
#   president_scoring  standings and leaderboards      role president_scoring
#   president_players  accounts, sessions (hashes)     role president_players
# No other role may connect to a database it does not own (CONNECT is revoked
# from PUBLIC). The tables themselves come from the Alembic migrations (the
# `migrate` job), run as each database's owner.
#
# The postgres image runs this once, on an empty data directory, from
# /docker-entrypoint-initdb.d. By hand: PGHOST=... PGUSER=postgres ./init-databases.sh
set -eu

: "${EVENTS_DB_PASSWORD:?set EVENTS_DB_PASSWORD: the password of the role president}"
: "${DEALER_DB_PASSWORD:?set DEALER_DB_PASSWORD: the password of the role president_dealer}"
: "${SCORING_DB_PASSWORD:?set SCORING_DB_PASSWORD: the password of the role president_scoring}"
: "${PLAYERS_DB_PASSWORD:?set PLAYERS_DB_PASSWORD: the password of the role president_players}"

psql --no-psqlrc -v ON_ERROR_STOP=1 \
    --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
    --set=events_password="$EVENTS_DB_PASSWORD" \
    --set=dealer_password="$DEALER_DB_PASSWORD" \
    --set=scoring_password="$SCORING_DB_PASSWORD" \
    --set=players_password="$PLAYERS_DB_PASSWORD" <<'SQL'
CREATE ROLE president LOGIN PASSWORD :'events_password';
CREATE ROLE president_dealer LOGIN PASSWORD :'dealer_password';
CREATE ROLE president_scoring LOGIN PASSWORD :'scoring_password';
CREATE ROLE president_players LOGIN PASSWORD :'players_password';

CREATE DATABASE president OWNER president;
CREATE DATABASE president_dealer OWNER president_dealer;
CREATE DATABASE president_scoring OWNER president_scoring;
CREATE DATABASE president_players OWNER president_players;

REVOKE ALL ON DATABASE president FROM PUBLIC;
REVOKE ALL ON DATABASE president_dealer FROM PUBLIC;
REVOKE ALL ON DATABASE president_scoring FROM PUBLIC;
REVOKE ALL ON DATABASE president_players FROM PUBLIC;
SQL
