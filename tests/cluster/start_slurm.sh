#!/usr/bin/env bash
# Start a private single-node SLURM cluster on this machine, for tests/cluster/test_slurm.py.
#
# Uses Debian's packages (apt-get install slurmctld slurmd slurm-client munge) and no systemd:
# a private munged, slurmctld and slurmd run as daemons with all their state, sockets, logs and
# pid files in STATE_DIR; the machine's /etc/munge is left alone. The only file outside
# STATE_DIR is the symbolic link /etc/slurm/slurm.conf -> STATE_DIR/slurm.conf: `srun` inside a
# job step of the executor plugin runs without $SLURM_CONF (the plugin clears SLURM_* variables)
# and reads the default path. An existing /etc/slurm/slurm.conf that is not such a link is an
# error: this script never replaces a real cluster's configuration.
# Job states come from `squeue` (jobs stay visible for MinJobAge seconds after they end), so no
# accounting database (slurmdbd, mariadb) is needed.
#
# Usage: start_slurm.sh STATE_DIR
# Stop:  stop_slurm.sh STATE_DIR
#
# Environment: INFREPRO_SLURMCTLD_PORT (default 6817), INFREPRO_SLURMD_PORT (default 6818).
# Must run as root (slurmd starts jobs as their submitting user).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 STATE_DIR" >&2
    exit 2
fi
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
    if ! command -v "$tool" >/dev/null 2>&1 && [[ ! -x "/usr/sbin/$tool" ]]; then
        echo "start_slurm.sh: '$tool' not found; apt-get install slurmctld slurmd slurm-client munge" >&2
        exit 1
    fi
done
if [[ $(id -u) -ne 0 ]]; then
    echo "start_slurm.sh: must run as root (slurmd must be able to start jobs as any user)" >&2
    exit 1
fi
export PATH="$PATH:/usr/sbin"

state=$(mkdir -p "$1" && cd "$1" && pwd)
ctld_port=${INFREPRO_SLURMCTLD_PORT:-6817}
slurmd_port=${INFREPRO_SLURMD_PORT:-6818}
host=$(hostname -s)
system_conf=/etc/slurm/slurm.conf
marker="# Single-node test cluster written by tests/cluster/start_slurm.sh."
# Only a link left by an earlier test cluster (its target gone or written by this script) may go.
if [[ -L "$system_conf" ]]; then
    target=$(readlink "$system_conf")
    if [[ -e "$target" ]] && ! grep -qxF "$marker" "$target"; then
        echo "start_slurm.sh: $system_conf links to $target, not to a test cluster's config" >&2
        exit 1
    fi
    other_pid_file="$(dirname "$target")/slurmctld.pid"
    if [[ "$target" != "$state/slurm.conf" && -s "$other_pid_file" ]] \
        && kill -0 "$(<"$other_pid_file")" 2>/dev/null; then
        echo "start_slurm.sh: another test cluster is running ($target); stop it first" >&2
        exit 1
    fi
elif [[ -e "$system_conf" ]]; then
    echo "start_slurm.sh: $system_conf exists (a real SLURM set-up?); not touching it" >&2
    exit 1
fi
mkdir -p "$state/munge" "$state/ctld" "$state/slurmd" "$state/log"
chmod 700 "$state/munge"

# MUNGE authenticates every message between the SLURM commands and daemons (key made once per
# STATE_DIR).
if [[ ! -s "$state/munge/munge.key" ]]; then
    mungekey --create --keyfile="$state/munge/munge.key"
fi
chmod 600 "$state/munge/munge.key"
munged --force \
    --key-file="$state/munge/munge.key" \
    --socket="$state/munge/munge.socket" \
    --pid-file="$state/munge/munged.pid" \
    --log-file="$state/log/munged.log" \
    --seed-file="$state/munge/munged.seed"

# The node offers this host's CPUs and memory (from `slurmd -C`), but at least 2 CPUs and
# 16 GB: profiles/slurm asks for up to 2 CPUs (cores) and 8000 MB (analysis), which small CI
# machines may lack. config_overrides lets slurmd accept the larger figures; without cgroups,
# nothing limits a job's memory anyway.
hardware=$(slurmd -C | head -n 1)
cpus=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$hardware")
memory=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$hardware")
cpus=$((cpus > 2 ? cpus : 2))
memory=$((memory > 16384 ? memory : 16384))

cat >"$state/slurm.conf" <<EOF
$marker
ClusterName=infrepro-test
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/slurmd
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
# No cgroups in containers: track job processes through /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
# Finished jobs stay visible to squeue for MinJobAge seconds: the executor plugin reads their
# final state there (--slurm-status-command squeue needs >= 3 status-check intervals).
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
mkdir -p /etc/slurm
ln -sfn "$state/slurm.conf" "$system_conf"
export SLURM_CONF="$state/slurm.conf"

slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"

# Wait until the node is idle and accepts jobs.
for _ in $(seq 1 60); do
    node_state=$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null || true)
    if [[ "$node_state" == idle* ]]; then
        echo "SLURM is up: node $host (CPUs=$cpus RealMemory=$memory), SLURM_CONF=$SLURM_CONF"
        exit 0
    fi
    sleep 1
done
echo "start_slurm.sh: node $host did not become idle (state: '${node_state:-none}'); logs:" >&2
tail -n 20 "$state/log/slurmctld.log" "$state/log/slurmd.log" >&2 || true
exit 1
