# Records NCCL RAS sessions (raw protocol exchanges), ncclras output where
# installed, nvidia-smi samples and /proc/<pid>/maps for a healthy job, a
# job with one rank stopped (SIGSTOP) and a job with one rank killed.
import os, sys, time, subprocess, json, struct, signal, glob
import psutil

import rasclient

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "record.log"), "a")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def save(name, data):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def ras_session(name, cmds):
    t0 = time.time()
    save(name, rasclient.transcript(cmds))
    log(name, f"{time.time()-t0:.1f}s")


NCCLRAS = rasclient.find_ncclras()
log("ncclras:", NCCLRAS)


def ncclras(name, args):
    if NCCLRAS:
        save(name, rasclient.ncclras_output(NCCLRAS, args))


def smi(name):
    r = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,utilization.gpu,power.draw,clocks.sm,clocks.mem,temperature.gpu",
                        "--format=csv"], capture_output=True, timeout=30)
    r2 = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
                        capture_output=True, timeout=30)
    save(name, b"$ nvidia-smi --query-gpu=index,uuid,utilization.gpu,power.draw,clocks.sm,clocks.mem,temperature.gpu --format=csv\n" + r.stdout +
         b"$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n" + r2.stdout)


def sample(tag):
    ts = time.strftime("%H:%M:%S", time.gmtime())
    log("sample", tag, ts)
    ras_session(f"{tag}.status.txt", ["STATUS"])
    ras_session(f"{tag}.verbose.txt", ["VERBOSE STATUS"])
    ras_session(f"{tag}.json.txt", ["SET FORMAT json", "VERBOSE STATUS"])
    ncclras(f"{tag}.ncclras-v.txt", ["-v"])
    smi(f"{tag}.smi.txt")


def port_holder(port=28028):
    for c in psutil.net_connections(kind="tcp"):
        if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN:
            return c.pid
    return None


env = dict(os.environ)
env.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1",
            "NCCL_MULTI_RANK_GPU_ENABLE": "1", "NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1",
            "NCCL_SOCKET_IFNAME": "lo", "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,RAS",
            "NCCL_RAS_ENABLE": "1", "CUDA_VISIBLE_DEVICES": "0", "NCCL_IB_DISABLE": "1",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517", "PYTHONUNBUFFERED": "1"})


def start(world, tag):
    procs = []
    for r in range(world):
        e = dict(env, RANK=str(r), WORLD_SIZE=str(world), NCCL_HOSTID=f"node{r}", MASTER_PORT=str(29517 + ord(tag[0])))
        f = open(os.path.join(OUT, f"{tag}.rank{r}.log"), "wb")
        procs.append(subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "job.py")],
                                      env=e, stdout=f, stderr=subprocess.STDOUT))
    return procs


def wait_up(procs, world, tag, limit=120):
    t0 = time.time()
    while time.time() - t0 < limit:
        ok = 0
        for r in range(world):
            try:
                s = open(os.path.join(OUT, f"{tag}.rank{r}.log")).read()
            except Exception:
                s = ""
            if " iter " in s:
                ok += 1
        if ok == world:
            return True
        if any(p.poll() is not None for p in procs):
            return False
        time.sleep(1)
    return False


def build_id(path):
    with open(path, "rb") as f:
        d = f.read(1 << 26)
    # ELF64 little endian: section headers
    shoff = struct.unpack_from("<Q", d, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", d, 0x3A)
    with open(path, "rb") as f:
        f.seek(shoff)
        sh = f.read(shentsize * shnum)
        for i in range(shnum):
            typ = struct.unpack_from("<I", sh, i * shentsize + 4)[0]
            off, size = struct.unpack_from("<QQ", sh, i * shentsize + 0x18)
            if typ != 7:
                continue
            f.seek(off)
            n = f.read(size)
            p = 0
            while p + 12 <= len(n):
                nsz, dsz, t = struct.unpack_from("<III", n, p)
                name = n[p + 12:p + 12 + nsz]
                desc_off = p + 12 + ((nsz + 3) & ~3)
                if t == 3 and name.startswith(b"GNU"):
                    return n[desc_off:desc_off + dsz].hex()
                p = desc_off + ((dsz + 3) & ~3)
    return None



import torch
log(torch.__version__, "nccl", torch.cuda.nccl.version())
subprocess.run("pip show nvidia-nccl-cu13 2>/dev/null | head -3; nvidia-smi -L; uname -r; ncclras --version; ldconfig -p | grep -i nccl; dpkg -l | grep -i nccl", shell=True, stdout=LOG, stderr=LOG)
LOG.flush()


def job(tag, world=3):
    for r in range(world):
        if os.path.exists(f"/tmp/hang.{r}"):
            os.remove(f"/tmp/hang.{r}")
    procs = start(world, tag)
    if not wait_up(procs, world, tag):
        log(tag, "did not come up")
        for p in procs:
            p.kill(); p.wait()
        return None, None
    holder = port_holder()
    log(tag, "world", world, "pids", [p.pid for p in procs], "port 28028 held by", holder)
    victim = [p for p in procs if p.pid != holder][-1]
    log(tag, "victim rank", procs.index(victim), "pid", victim.pid)
    return procs, victim


def finish(procs):
    for p in procs:
        log("pid", p.pid, "alive" if p.poll() is None else f"exited {p.returncode}")
        if p.poll() is None:
            p.kill()
            p.wait()


procs, victim = job("a")
if procs:
    libs = set()
    for p in procs:
        for l in open(f"/proc/{p.pid}/maps"):
            f = l.split()
            if len(f) >= 6 and "libnccl" in f[5]:
                libs.add(f[5])
    save(f"maps.{procs[0].pid}.txt", open(f"/proc/{procs[0].pid}/maps").read())
    for l in sorted(libs):
        log("lib", l, "size", os.path.getsize(l), "build-id", build_id(l))
    for l in glob.glob("/usr/lib/x86_64-linux-gnu/libnccl.so*") + glob.glob("/usr/local/lib/libnccl.so*"):
        if os.path.isfile(l) and not os.path.islink(l):
            log("system lib", l, "size", os.path.getsize(l), "build-id", build_id(l))
    sample("healthy-1")
    time.sleep(15)
    sample("healthy-2")
    log("SIGSTOP", victim.pid)
    os.kill(victim.pid, signal.SIGSTOP)
    time.sleep(10)
    sample("stopped-1")
    time.sleep(15)
    sample("stopped-2")
    log("SIGKILL", victim.pid)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    time.sleep(5)
    sample("killed-1")
    time.sleep(15)
    sample("killed-2")
    finish(procs)

procs, victim = job("b")
if procs:
    sample("b-healthy")
    r = procs.index(victim)
    open(f"/tmp/hang.{r}", "w").close()
    log("rank", r, "host thread told to stop issuing collectives")
    time.sleep(10)
    sample("hung-1")
    time.sleep(15)
    sample("hung-2")
    finish(procs)
log("done")
