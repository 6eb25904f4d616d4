# Shared by scripts/image and scripts/compose-test. Source it after common.sh; it defines functions only.

# Picks the container engine: podman, or docker when its daemon answers (a docker client alone, as some machines
# have, builds and runs nothing), else podman installed from Debian.
# Sets YONA_ENGINE and, for podman without a CONTAINERS_CONF of the caller's, the settings a sandbox needs.
yona_container_engine() {
    if command -v podman >/dev/null; then
        YONA_ENGINE=podman
    elif command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; then
        YONA_ENGINE=docker
    else
        yona_install_packages podman runc uidmap slirp4netns
        YONA_ENGINE=podman
    fi
    if [ "$YONA_ENGINE" = podman ]; then
        command -v runc >/dev/null || yona_install_packages runc
        export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/scripts/lib/containers.conf}"
    fi
    # Explicit file and process limits (containers.conf sets no defaults), as high as this shell may give.
    local files processes
    files="$(ulimit -Hn)"; processes="$(ulimit -Hu)"
    [ "$files" = unlimited ] && files=1048576
    # A container may not be given this shell's whole process allowance; 8192 threads are plenty for the server.
    { [ "$processes" = unlimited ] || [ "$processes" -gt 8192 ]; } && processes=8192
    YONA_ULIMITS=(--ulimit "nofile=$files:$files" --ulimit "nproc=$processes:$processes")
    export YONA_NOFILE="$files" YONA_NPROC="$processes" # deploy/compose.yaml's
}

# Whether the engine can pull an image (a registry answers) within a few seconds.
yona_can_pull() {
    timeout 20 "$YONA_ENGINE" pull -q "$1" >/dev/null 2>&1
}
