"""Instructions per operation of `strata serve`, per phase of the SDK workload (deterministic,
unlike the /proc CPU times of emulator_compare.py, so usable on a loaded machine):

    target/sdk-venv/bin/python benches/emulator_compare.callgrind.py target/release/strata /tmp/cg

The server runs under `valgrind --tool=callgrind --instr-atstart=no`; each phase (batch inserts
of 5 partitions x 1,000 entities, 300 point reads, 5 partition queries, 2 filtered scans of
1/10 of the table, 300 merge upserts, then 320 from 8 client processes) is counted alone with `callgrind_control -z / -i on /
-i off / -d <phase>`, and the totals of the dumps are divided by the phase's operations (user
space only: the kernel's share of loopback TCP and wake-ups is not counted).
"""
import glob, os, random, re, socket, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulator_compare import entity, free_port, wait_listening, ACCOUNT, KEY
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableClient, TableServiceClient, UpdateMode

binary, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
for f in glob.glob(f"{out}/cg.*"): os.remove(f)
port = free_port()
work = tempfile.mkdtemp()
proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}/cg.%p",
    binary, "serve", "--db", f"{work}/db", "--addr", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=open(f"{out}/vg.log","w"))
wait_listening(proc, port)
ep = f"http://127.0.0.1:{port}/{ACCOUNT}"
cred = AzureNamedKeyCredential(ACCOUNT, KEY)
TableServiceClient(endpoint=ep, credential=cred).create_table("tcg")
t = TableClient(endpoint=ep, table_name="tcg", credential=cred)
t.get_entity  # warm
def ctl(*a): subprocess.run(["callgrind_control", *a, str(proc.pid)], check=True, stdout=subprocess.DEVNULL)
phases = []
def phase(name, n, fn):
    ctl("-z"); ctl("-i", "on"); fn(); ctl("-i", "off"); ctl("-d", name)
    phases.append((name, n))
P = 5
def load():
    for p in range(P):
        for b in range(0, 1000, 100):
            t.submit_transaction([("create", entity(f"p{p:04}", i)) for i in range(b, b + 100)])
phase("batch", P * 1000, load)
rng = random.Random(1)
phase("read", 300, lambda: [t.get_entity(f"p{rng.randrange(P):04}", f"{rng.randrange(1000):08}") for _ in range(300)])
phase("pquery", P * 1000, lambda: [sum(1 for _ in t.query_entities("PartitionKey eq @pk", parameters={"pk": f"p{p:04}"})) for p in range(P)])
phase("scan", 1000, lambda: [sum(1 for _ in t.query_entities("Group eq @g", parameters={"g": f"g{g}"}, results_per_page=1000)) for g in range(2)])
def ups():
    for i in range(300):
        e = entity(f"p{rng.randrange(P):04}", rng.randrange(1000)); e["N"] = -i
        t.upsert_entity(e, mode=UpdateMode.MERGE)
phase("upsert", 300, ups)
# The same merge upserts from 8 client processes (40 each): the concurrent write path (groups,
# hand-offs). Under valgrind the server runs ~50x slower, so more writes meet than natively:
# compare binaries with this phase, not with the native 8-client row.
from concurrent.futures import ProcessPoolExecutor
from emulator_compare import warm, work_upsert
with ProcessPoolExecutor(max_workers=8) as pool:
    list(pool.map(warm, range(8)))
    phase("upsert8", 320, lambda: [f.result() for f in [pool.submit(work_upsert, ep, "tcg", (40, 500 + c, P)) for c in range(8)]])
proc.terminate(); proc.wait()
for name, n in phases:
    total = 0
    for f in glob.glob(f"{out}/cg.{proc.pid}.*"):
        txt = open(f).read()
        if f"Trigger: dump {name}\n" not in txt: continue
        m = re.search(r"^totals: (\d+)", txt, re.M)
        total += int(m.group(1))
    print(f"{name:8} {n:6} ops  {total/n:12.0f} instr/op")
