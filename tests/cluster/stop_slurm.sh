#!/usr/bin/env bash
# Stop the single-node SLURM cluster that start_slurm.sh started in STATE_DIR: cancel its jobs,
# then end slurmd, slurmctld and munged by the pids in their pid files, and remove the link
# /etc/slurm/slurm.conf to its config. Nothing else is touched.
#
# Usage: stop_slurm.sh STATE_DIR
set -uo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 STATE_DIR" >&2
    exit 2
fi
state=$(cd "$1" 2>/dev/null && pwd || echo "$1")
export PATH="$PATH:/usr/sbin"
export SLURM_CONF="$state/slurm.conf"

if [[ -f "$SLURM_CONF" && -f "$state/slurmctld.pid" ]]; then
    scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
fi

# Stop daemons together: TERM each, wait up to 20 s for all of them (polling every 0.1 s), then
# KILL any left. slurmd and slurmctld stop side by side (each took 2-3 s), munged after them.
stop_pid_files() {
    local pid_file pid pids=()
    for pid_file in "$@"; do
        [[ -s "$pid_file" ]] || continue
        pid=$(<"$pid_file")
        kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    done
    for _ in $(seq 1 200); do
        local alive=0
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null && alive=1
        done
        [[ $alive -eq 0 ]] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    done
    rm -f "$@"
}

stop_pid_files "$state/slurmd.pid" "$state/slurmctld.pid"
stop_pid_files "$state/munge/munged.pid"
if [[ -L /etc/slurm/slurm.conf && "$(readlink /etc/slurm/slurm.conf)" == "$SLURM_CONF" ]]; then
    rm -f /etc/slurm/slurm.conf
fi
echo "SLURM stopped ($state)"
