# Records NCCL RAS client sessions for real hangs of a job with one rank per
# GPU, each rank an independent process (no launcher that would tear the job
# down): a healthy job, then for chosen ranks in turn the host thread stalled
# (it stops issuing collectives), the process stopped (SIGSTOP) and the
# process killed (SIGKILL) while the others keep waiting.
#
#   python3 record_gpus.py OUTDIR [CASE ...]     CASE: healthy | stall:R | stop:R | kill:R
#
# Each case directory holds the raw client sessions (STATUS, VERBOSE STATUS,
# VERBOSE STATUS after SET FORMAT json) of two samples, `ncclras -v` where
# installed, nvidia-smi, the ranks' logs and meta.json (pids by rank, the
# rank behind, which process held the RAS client port).
import os, sys, time, subprocess, json, signal
import psutil

import rasclient

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
HERE = os.path.dirname(os.path.abspath(__file__))
LOG = open(os.path.join(OUT, "record.log"), "a")
PORT = rasclient.PORT


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def save(path, data):
    if isinstance(data, str):
        data = data.encode()
    with open(path, "wb") as f:
        f.write(data)


def ras_session(path, cmds):
    save(path, rasclient.transcript(cmds, PORT, timeout=12))


NCCLRAS = rasclient.find_ncclras()


def sample(d, tag):
    t0 = time.time()
    ras_session(os.path.join(d, f"{tag}.status.txt"), ["STATUS"])
    ras_session(os.path.join(d, f"{tag}.verbose.txt"), ["VERBOSE STATUS"])
    ras_session(os.path.join(d, f"{tag}.json.txt"), ["SET FORMAT json", "VERBOSE STATUS"])
    if NCCLRAS:
        save(os.path.join(d, f"{tag}.ncclras-v.txt"), rasclient.ncclras_output(NCCLRAS, ["-v"]))
    r = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,utilization.gpu,power.draw,clocks.sm,clocks.mem,temperature.gpu",
                        "--format=csv"], capture_output=True, timeout=30)
    r2 = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
                        capture_output=True, timeout=30)
    save(os.path.join(d, f"{tag}.smi.txt"), r.stdout + r2.stdout)
    log("  sample", tag, f"{time.time()-t0:.1f}s")


def port_holder():
    for c in psutil.net_connections(kind="tcp"):
        if c.laddr and c.laddr.port == PORT and c.status == psutil.CONN_LISTEN:
            return c.pid
    return None


ENV = dict(os.environ)
ENV.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
            "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,RAS", "NCCL_RAS_ENABLE": "1",
            "MASTER_ADDR": "127.0.0.1", "PYTHONUNBUFFERED": "1"})


def run_case(n, case, world):
    kind, _, r = case.partition(":")
    victim = int(r) if r else None
    d = os.path.join(OUT, f"{n:02d}-{kind}" + (f"-rank{victim}" if victim is not None else ""))
    os.makedirs(d, exist_ok=True)
    for k in range(world):
        if os.path.exists(f"/tmp/hang.{k}"):
            os.remove(f"/tmp/hang.{k}")
    procs = []
    for k in range(world):
        e = dict(ENV, RANK=str(k), WORLD_SIZE=str(world), JOB_GPU=str(k), MASTER_PORT=str(29600 + n))
        f = open(os.path.join(d, f"rank{k}.log"), "wb")
        procs.append(subprocess.Popen([sys.executable, os.path.join(HERE, "job.py")], env=e, stdout=f, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    t0 = time.time()
    up = False
    while time.time() - t0 < 150:
        logs = [open(os.path.join(d, f"rank{k}.log"), errors="replace").read() for k in range(world)]
        if all(" iter " in s for s in logs):
            up = True
            break
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(1)
    meta = {"case": case, "world": world, "pids": [p.pid for p in procs], "behind": victim, "mode": kind,
            "up": up, "ras_port_holder_pid": port_holder()}
    if meta["ras_port_holder_pid"] in meta["pids"]:
        meta["ras_port_holder_rank"] = meta["pids"].index(meta["ras_port_holder_pid"])
    log(case, json.dumps(meta))
    if up:
        time.sleep(3)
        if kind == "healthy":
            sample(d, "s1")
            time.sleep(10)
            sample(d, "s2")
        else:
            p = procs[victim]
            meta["acted_at"] = time.strftime("%H:%M:%S", time.gmtime())
            if kind == "stall":
                open(f"/tmp/hang.{victim}", "w").close()
            elif kind == "stop":
                os.kill(p.pid, signal.SIGSTOP)
            elif kind == "kill":
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
            time.sleep(6)
            sample(d, "s1")
            time.sleep(8)
            sample(d, "s2")
    meta["end"] = {str(k): ("alive" if p.poll() is None else f"exited {p.returncode}") for k, p in enumerate(procs)}
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    save(os.path.join(d, "meta.json"), json.dumps(meta, indent=1) + "\n")
    time.sleep(2)


import torch
world = torch.cuda.device_count()
log("torch", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "gpus", world, "ncclras", NCCLRAS)
subprocess.run("nvidia-smi -L; nvidia-smi topo -m; uname -r; python3 -m pip show nvidia-nccl-cu13 2>/dev/null | head -2; "
               + (f"{NCCLRAS} --version 2>&1 | head -3" if NCCLRAS else "true"), shell=True, stdout=LOG, stderr=LOG)
LOG.flush()
cases = sys.argv[2:] or (["healthy"] + [f"{m}:{r}" for m in ("stall", "stop", "kill") for r in range(world)])
for n, c in enumerate(cases, 1):
    run_case(n, c, world)
log("done")
