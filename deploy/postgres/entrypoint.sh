#!/bin/sh
# Initialises $PGDATA on first start (user and database from POSTGRES_USER and POSTGRES_DB, which defaults to the
# user as in the official image; password from POSTGRES_PASSWORD_FILE; SCRAM for every network client), then runs
# the server in the foreground.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    user="${POSTGRES_USER:-postgres}"
    password="$(cat "${POSTGRES_PASSWORD_FILE:?POSTGRES_PASSWORD_FILE must name the password file}")"
    printf '%s\n' "$password" > /tmp/pwfile
    initdb --username="$user" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/pwfile
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    database="${POSTGRES_DB:-$user}"
    if [ "$database" != postgres ]; then
        echo "CREATE DATABASE \"$database\" OWNER \"$user\";" | postgres --single -D "$PGDATA" -c listen_addresses='' postgres >/dev/null
    fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
