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

# Stop one daemon: TERM, wait up to 20 s, then KILL.
stop_pid_file() {
    local pid_file=$1 pid
    [[ -s "$pid_file" ]] || return 0
    pid=$(<"$pid_file")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    fi
    rm -f "$pid_file"
}

stop_pid_file "$state/slurmd.pid"
stop_pid_file "$state/slurmctld.pid"
stop_pid_file "$state/munge/munged.pid"
if [[ -L /etc/slurm/slurm.conf && "$(readlink /etc/slurm/slurm.conf)" == "$SLURM_CONF" ]]; then
    rm -f /etc/slurm/slurm.conf
fi
echo "SLURM stopped ($state)"
