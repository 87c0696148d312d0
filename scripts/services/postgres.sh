# A throwaway PostgreSQL cluster for the study's storage tests. Sourced by scripts/test.sh.
# service_postgres_start DIR: initialise a cluster in DIR, start it on a free local port and
# export TRACKTALE_TEST_POSTGRES_URL; service_postgres_stop: stop it (DIR is left to the caller).
# As root the server runs as the "postgres" user (PostgreSQL refuses to run as root).

_tracktale_pg_bin() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bin" ] && command -v pg_ctl >/dev/null 2>&1; then
    bin=$(dirname "$(command -v pg_ctl)")
  fi
  [ -n "$bin" ] && [ -x "$bin/pg_ctl" ] || return 1
  echo "$bin"
}

_tracktale_pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

service_postgres_start() {
  local dir=$1 bin port
  bin=$(_tracktale_pg_bin) || {
    echo "==> postgres: PostgreSQL is not installed (apt-get install postgresql)" >&2
    return 1
  }
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir"
    chmod o+x "$(dirname "$dir")"  # let the postgres user reach DIR
  fi
  _tracktale_pg_as_owner "$bin/initdb" -D "$dir/data" -A trust -U tracktale -E UTF8 \
    --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
  # A port that answers no connection can still be taken by the time the server binds it
  # (another checkout's tests start clusters too), so a bind failure moves on to the next one.
  local started=""
  for port in $(seq 55432 55499); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    # fsync off: a throwaway test cluster trades durability for speed.
    if _tracktale_pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
      start >/dev/null; then
      started=1
      break
    fi
    grep -q "Address already in use" "$dir/server.log" || break
  done
  [ -n "$started" ] || { cat "$dir/server.log" >&2; return 1; }
  _tracktale_pg_as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U tracktale tracktale_test
  export TRACKTALE_TEST_POSTGRES_URL="postgresql+psycopg://tracktale@127.0.0.1:$port/tracktale_test"
  _TRACKTALE_PG_DIR=$dir
  _TRACKTALE_PG_CTL=$bin/pg_ctl
  echo "==> postgres: $TRACKTALE_TEST_POSTGRES_URL"
}

service_postgres_stop() {
  [ -n "${_TRACKTALE_PG_DIR:-}" ] || return 0
  _tracktale_pg_as_owner "$_TRACKTALE_PG_CTL" -D "$_TRACKTALE_PG_DIR/data" -m fast -w stop >/dev/null
  unset TRACKTALE_TEST_POSTGRES_URL _TRACKTALE_PG_DIR _TRACKTALE_PG_CTL
}
