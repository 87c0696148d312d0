# A throwaway single-node SLURM cluster (slurmctld + slurmd, CPU only) for the sweep tests.
# Sourced by scripts/test.sh, which calls service_slurm_start DIR and service_slurm_stop.
# Exports SLURM_CONF (read by sbatch, squeue, scancel, and so by submitit) and
# TRACKTALE_TEST_SLURM_PARTITION. Without slurm-wlm and munge installed it exports nothing and
# returns 0: the SLURM tests then skip, or fail under TRACKTALE_REQUIRE_SERVICES=1.
# Runs as root (slurmd starts job steps as the submitting user); munged runs as "munge".

service_slurm_start() {
  local dir=$1 host cpus ports
  if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    echo "==> slurm: slurm-wlm or munge is not installed: the SLURM sweep tests cannot run" >&2
    return 0
  fi
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  _slurm_start_munge || return 1
  host=$(hostname -s)
  cpus=$(nproc)
  # Two free ports, so that a cluster another checkout started on this machine is left alone.
  ports=$(_slurm_free_ports 2) || { echo "==> slurm: no free ports" >&2; return 1; }
  set -- $ports
  # Addresses are 127.0.0.1, whatever the host name resolves to. KillWait=2: a cancelled test
  # job is killed two seconds after SIGTERM (submitit ignores SIGTERM), not thirty.
  cat >"$dir/slurm.conf" <<CONF
ClusterName=tracktale-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MpiDefault=none
KillWait=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=$1
SlurmdPort=$2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  _SLURM_DIR=$dir
  slurmctld -f "$SLURM_CONF" || { cat "$dir/log/slurmctld.log" >&2; return 1; }
  slurmd -f "$SLURM_CONF" || { cat "$dir/log/slurmd.log" >&2; return 1; }
  local waited=0
  until sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; do
    sleep 1
    waited=$((waited + 1))
    if [ "$waited" -ge 60 ]; then
      echo "==> slurm: the node did not become idle; see $dir/log" >&2
      tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
      return 1
    fi
  done
  export TRACKTALE_TEST_SLURM_PARTITION=debug
  echo "==> slurm: partition debug on $host ($cpus CPUs), SLURM_CONF=$SLURM_CONF"
}

_slurm_free_ports() {
  local wanted=$1 port found=()
  for port in $(seq 16817 16899); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    found+=("$port")
    [ ${#found[@]} -ge "$wanted" ] && { echo "${found[*]}"; return 0; }
  done
  return 1
}

_slurm_start_munge() {
  pgrep -x munged >/dev/null 2>&1 && return 0
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
  if [ ! -f /etc/munge/munge.key ]; then
    /usr/sbin/mungekey --create >/dev/null 2>&1 ||
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
    chown munge:munge /etc/munge/munge.key
    chmod 400 /etc/munge/munge.key
  fi
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u munge -- /usr/sbin/munged || return 1
  else
    /usr/sbin/munged || return 1
  fi
  _SLURM_STARTED_MUNGE=1
}

service_slurm_stop() {
  local dir=${_SLURM_DIR:-} pidfile pid waited
  [ -n "$dir" ] || return 0
  # Cancel what the tests left queued or running, then stop the daemons and wait for them.
  scancel --quiet --full --partition=debug 2>/dev/null || true
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 20 ]; do
      sleep 0.5
      waited=$((waited + 1))
    done
  done
  if [ -n "${_SLURM_STARTED_MUNGE:-}" ] && [ -f /run/munge/munged.pid ]; then
    kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
  fi
  unset SLURM_CONF TRACKTALE_TEST_SLURM_PARTITION _SLURM_DIR _SLURM_STARTED_MUNGE
}
