#!/bin/sh
# A throwaway PostgreSQL cluster for the example, in ./data/postgres, on 127.0.0.1:5432, trust authentication for
# the `postgres` user (loopback only). Debian: apt-get install postgresql (the server binaries are in
# /usr/lib/postgresql/<version>/bin). initdb refuses to run as root: run this as an ordinary user.
# Stop it with: pg_ctl -D data/postgres stop
set -eu
cd "$(dirname "$0")"
BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
DATA=data/postgres
if [ ! -f "$DATA/PG_VERSION" ]; then
  mkdir -p data
  "$BIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C >/dev/null
fi
exec "$BIN/pg_ctl" -D "$DATA" -l data/postgres.log -o "-p 5432 -k $PWD/data -c listen_addresses=127.0.0.1" start
