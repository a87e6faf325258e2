"""Point reads of one loaded table with 1 and 8 client processes, alternated, on one server:
the same data, the same memtable, only the client count differs.

    target/sdk-venv/bin/python benches/point_reads_by_clients.py <strata binary> \
        [rounds] [reads] [--perf | --record] [--serve-arg ARG ...]

20 partitions of 1,000 entities (PARTS in the environment) are batch-loaded by 8 clients (they
stay in the memtable), then each round reads `reads` random keys with 1 client and then with 8.
Per row: server CPU us/op (schedstat of all threads, as emulator_compare.py), voluntary and
involuntary context switches per op (all threads); with --perf the `perf stat` software
counters per op (task-clock in us); with --record a `perf record -e cpu-clock -g` profile per
row in rec-<round>-<clients>.data. SRV_TUNABLES sets GLIBC_TUNABLES for the server alone.
"""
import os, signal, subprocess, sys, tempfile, time, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from concurrent.futures import ProcessPoolExecutor
from emulator_compare import (free_port, wait_listening, CpuMeter, ACCOUNT, KEY, work_batch_insert,
                              work_point_read, warm, split, run_row)
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableServiceClient

args = sys.argv[1:]
perf = "--perf" in args
record = "--record" in args
serve_args = []
if "--serve-arg" in args:
    i = args.index("--serve-arg"); serve_args = args[i + 1:]; args = args[:i]
args = [a for a in args if a not in ("--perf", "--record")]
binary = args[0]
rounds = int(args[1]) if len(args) > 1 else 2
reads = int(args[2]) if len(args) > 2 else 1000
PARTS = int(os.environ.get("PARTS", "20"))

def switches(pid):
    v = n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in open(f"/proc/{pid}/task/{tid}/status"):
                if line.startswith("voluntary_ctxt_switches"): v += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"): n += int(line.split()[1])
        except FileNotFoundError:
            pass
    return v, n

EVENTS = "task-clock,context-switches,cpu-migrations,page-faults,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_recvfrom,syscalls:sys_enter_writev,syscalls:sys_enter_futex,syscalls:sys_enter_write,sched:sched_wakeup"

work = tempfile.mkdtemp(prefix="point-reads-")
port = free_port()
proc = subprocess.Popen([binary, "serve", "--db", f"{work}/db", "--addr", f"127.0.0.1:{port}", *serve_args],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        env={**os.environ, **({"GLIBC_TUNABLES": os.environ["SRV_TUNABLES"]} if "SRV_TUNABLES" in os.environ else {})})
try:
    wait_listening(proc, port)
    ep = f"http://127.0.0.1:{port}/{ACCOUNT}"
    svc = TableServiceClient(endpoint=ep, credential=AzureNamedKeyCredential(ACCOUNT, KEY))
    svc.create_table("reads")
    pools = {c: ProcessPoolExecutor(max_workers=c) for c in (1, 8)}
    for c, pool in pools.items():
        list(pool.map(warm, range(c)))
    run_row(pools[8], 8, work_batch_insert, ep, "reads", split(list(range(PARTS)), 8))
    m = CpuMeter(proc.pid); m.settle(); m.stop()
    print("server AnonHugePages:", [l.split()[1] for l in open(f"/proc/{proc.pid}/smaps_rollup") if l.startswith("AnonHugePages")], flush=True)
    seed = 1000
    for r in range(rounds):
        for clients in (1, 8):
            pool = pools[clients]
            seed += 10
            shares = [(reads // clients, seed + i, PARTS) for i in range(clients)]
            sw0 = switches(proc.pid)
            meter = CpuMeter(proc.pid)
            p = None
            if record:
                p = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "20000", "-g", "-p", str(proc.pid), "-o", f"rec-{r}-{clients}.data"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
            elif perf:
                p = subprocess.Popen(["perf", "stat", "-x,", "-e", EVENTS, "-p", str(proc.pid), "-o", f"{work}/perf.txt"])
                time.sleep(0.3)
            ops, secs = run_row(pool, clients, work_point_read, ep, "reads", shares)
            if p:
                p.send_signal(signal.SIGINT); p.wait()
            meter.settle()
            cpu, _, _ = meter.stop()
            sw1 = switches(proc.pid)
            line = (f"round {r} clients {clients}: {cpu * 1e6 / ops:7.1f} us/op  {ops / secs:6.0f}/s  "
                    f"vcs {(sw1[0] - sw0[0]) / ops:.2f} nvcs {(sw1[1] - sw0[1]) / ops:.2f}  load {os.getloadavg()[0]:.1f}")
            if p and perf:
                vals = []
                for l in open(f"{work}/perf.txt"):
                    f = l.strip().split(",")
                    if len(f) > 3 and f[0] and f[0][0].isdigit():
                        name = f[2].replace("syscalls:sys_enter_", "").replace("sched:", "")
                        v = float(f[0])
                        vals.append(f"{name}={v / ops * (1000 if name == 'task-clock' else 1):.2f}")
                line += "\n    " + " ".join(vals)
            print(line, flush=True)
finally:
    proc.terminate(); proc.wait()
    shutil.rmtree(work, ignore_errors=True)
