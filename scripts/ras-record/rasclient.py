# The pieces both recorders share: one NCCL RAS client session kept byte for
# byte, the ncclras binary where installed, nvidia-smi samples, and the
# process holding the RAS client port.
import glob, shutil, socket, subprocess, time

PORT = 28028


def transcript(cmds, port=PORT, timeout=20):
    """Runs one client session (handshake, cmds, the last reply read to EOF)
    and returns its transcript: '> ' lines were sent, '< ' lines are raw
    replies, every byte kept."""
    tr = []
    t0 = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
    except Exception as e:
        return f"# connect: {e!r}\n".encode()
    s.settimeout(timeout)

    def send(line):
        tr.append(b"> " + line.encode() + b"\n")
        s.sendall(line.encode() + b"\n")

    def readline():
        buf = b""
        while not buf.endswith(b"\n"):
            c = s.recv(4096)
            if not c:
                break
            buf += c
        tr.append(b"< " + buf + (b"" if buf.endswith(b"\n") else b"\n# (no newline)\n"))

    try:
        send("CLIENT PROTOCOL 2")
        readline()
        for c in cmds[:-1]:
            send(c)
            readline()
        send(cmds[-1])
        body = b""
        while True:
            c = s.recv(65536)
            if not c:
                break
            body += c
        tr.append(b"<<< reply to " + cmds[-1].encode() + b" until EOF (" + str(len(body)).encode() + b" bytes)\n")
        tr.append(body)
    except Exception as e:
        tr.append(f"\n# error after {time.time()-t0:.1f}s: {e!r}\n".encode())
    finally:
        s.close()
    tr.append(f"\n# session took {time.time()-t0:.2f}s\n".encode())
    return b"".join(tr)


def find_ncclras():
    """The ncclras binary on PATH or under /usr or /opt, or None."""
    path = shutil.which("ncclras")
    if path:
        return path
    for p in glob.glob("/usr/**/ncclras", recursive=True) + glob.glob("/opt/**/ncclras", recursive=True):
        return p
    return None


def ncclras_output(binary, args):
    """ncclras's stdout, stderr and exit status as one transcript."""
    try:
        r = subprocess.run([binary] + args, capture_output=True, timeout=25)
    except subprocess.TimeoutExpired as e:
        return (e.stdout or b"") + b"\n# timed out after 25 s\n"
    return r.stdout + b"\n# stderr:\n" + r.stderr + f"\n# exit {r.returncode}\n".encode()
