# Shared by scripts/run, scripts/test and scripts/bench. Source it; it defines functions only.

# The Debian packages the server builds against (operations.md).
YONA_DEBIAN_PACKAGES=(libsodium-dev libpq-dev libcurl4-openssl-dev libssl-dev libgd-dev libldap-dev pkg-config)

# Installs whichever of the given Debian packages are missing (apt-get update first, as Debian wants).
yona_install_packages() {
    local missing=()
    local pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The release build every script shares (scripts/run, scripts/bench, scripts/soak-db), with one set of flags so none
# rebuilds what another built. No debug information (Swift's -gnone, C's and C++'s -g0): a clean release build on 2
# cores took 586 s without it and 710 s with it (docs/performance.md "From a fresh clone"); a crash's backtrace still
# names the functions (the symbol table stays), without files and lines. The image's build passes -gnone too.
YONA_RELEASE_FLAGS=(-c release -Xswiftc -gnone -Xcc -g0 -Xcxx -g0)

# Builds yona-server in release mode (the build's progress on stdout, as `swift build` prints it).
yona_build_release() {
    swift build "${YONA_RELEASE_FLAGS[@]}" --product yona-server
}

# The release binary's path (after yona_build_release).
yona_release_binary() {
    echo "$(swift build "${YONA_RELEASE_FLAGS[@]}" --show-bin-path)/yona-server"
}

# A free TCP port on loopback.
yona_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Starts a throwaway PostgreSQL (initdb + pg_ctl as the postgres user, trust auth, loopback only) and
# exports YONA_PG_URL and YONA_PG_DIR. Stop it with yona_stop_postgres.
yona_start_postgres() {
    local bin
    bin=$(dirname "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | tail -n 1 || true)")
    if [ ! -x "$bin/initdb" ]; then
        yona_install_packages postgresql
        bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | tail -n 1)")
    fi
    yona_install_packages postgresql-client
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    YONA_PG_DIR=$(mktemp -d /tmp/yona-pg.XXXXXX)
    chown postgres "$YONA_PG_DIR"
    local port
    port=$(yona_free_port)
    runuser -u postgres -- "$bin/initdb" -D "$YONA_PG_DIR/data" -A trust -U postgres -E UTF8 >"$YONA_PG_DIR/initdb.log" 2>&1 \
        || { cat "$YONA_PG_DIR/initdb.log" >&2; return 1; }
    YONA_PG_BIN=$bin
    YONA_PG_OPTS="-p $port -k $YONA_PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=1000 -c shared_buffers=128MB -c fsync=off"
    YONA_PG_URL="postgres://postgres@127.0.0.1:$port/postgres"
    export YONA_PG_DIR YONA_PG_URL YONA_PG_BIN YONA_PG_OPTS
    yona_pg_start || { cat "$YONA_PG_DIR/server.log" >&2; return 1; }
    echo "throwaway PostgreSQL on 127.0.0.1:$port" >&2
}

# Starts the throwaway PostgreSQL again on its data (after yona_pg_stop), waiting until it accepts connections.
yona_pg_start() {
    runuser -u postgres -- "$YONA_PG_BIN/pg_ctl" -D "$YONA_PG_DIR/data" -l "$YONA_PG_DIR/server.log" -w -o "$YONA_PG_OPTS" start >/dev/null
}

# Stops it with pg_ctl's MODE: `fast` (sessions are ended, a clean shutdown) or `immediate` (as a crash: recovery on
# the next start).
yona_pg_stop() {
    runuser -u postgres -- "$YONA_PG_BIN/pg_ctl" -D "$YONA_PG_DIR/data" -m "$1" -w stop >/dev/null
}

yona_stop_postgres() {
    [ -n "${YONA_PG_DIR:-}" ] || return 0
    runuser -u postgres -- "$YONA_PG_BIN/pg_ctl" -D "$YONA_PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$YONA_PG_DIR"
}

# Starts nginx with one worker answering every request with `{"status":"UP"}` from memory, logging nothing: the
# fixed answer the benches measure beside `/health` (the HTTP floor of this machine). Takes a working directory;
# exports YONA_NGINX_URL and writes the pid to DIR/fixed-nginx.pid (yona_stop_fixed_nginx DIR stops it).
yona_start_fixed_nginx() {
    local dir="$1" port
    port=$(yona_free_port)
    mkdir -p "$dir/fixed-nginx"
    cat > "$dir/fixed-nginx.conf" <<NGINX
worker_processes 1;
pid $dir/fixed-nginx.pid;
error_log $dir/fixed-nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/fixed-nginx;
    keepalive_requests 10000000;
    server {
        listen 127.0.0.1:$port;
        default_type application/json;
        location / { return 200 '{"status":"UP"}'; }
    }
}
NGINX
    nginx -c "$dir/fixed-nginx.conf" -p "$dir/fixed-nginx"
    YONA_NGINX_URL="http://127.0.0.1:$port"
    export YONA_NGINX_URL
}

yona_stop_fixed_nginx() {
    [ -f "$1/fixed-nginx.pid" ] && kill "$(cat "$1/fixed-nginx.pid")" 2>/dev/null || true
}

# Requests per second of `wrk -t2 -c32 -d10s URL` (GET), the benches' one load shape for a fixed answer.
yona_wrk_rate() {
    wrk -t2 -c32 -d10s "$1" | awk '/Requests\/sec/ { printf "%.0f\n", $2 }'
}
