package testrig

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

const sshdPath = "/usr/sbin/sshd"

// newKey writes an ed25519 private key in OpenSSH format to path (mode 0600)
// and returns its public key.
func newKey(path, comment string) (ssh.PublicKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	if err := writeFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		return nil, err
	}
	return sp, writeFile(path+".pub", ssh.MarshalAuthorizedKey(sp), 0o644)
}

// writeKeys makes the throw-away user key and one host key per host.
func (r *Rig) writeKeys() error {
	r.KeyPath = filepath.Join(r.Dir, "id_ed25519")
	user, err := newKey(r.KeyPath, "sparkrig-testrig-user")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(r.Dir, "authorized_keys"), ssh.MarshalAuthorizedKey(user), 0o644); err != nil {
		return err
	}
	for _, h := range r.Hosts {
		hk, err := newKey(filepath.Join(h.Dir, "ssh_host_ed25519_key"), "sparkrig-testrig-"+h.Name)
		if err != nil {
			return err
		}
		h.HostKeyFingerprint = ssh.FingerprintSHA256(hk)
		h.HostKeyLine = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hk)))
	}
	return nil
}

// writeClientFiles writes known_hosts and ssh_config for the client side.
func (r *Rig) writeClientFiles() error {
	r.KnownHosts = filepath.Join(r.Dir, "known_hosts")
	r.SSHConfig = filepath.Join(r.Dir, "ssh_config")
	var kh, cfg strings.Builder
	for _, h := range r.Hosts {
		if !h.spec.UnknownHostKey {
			fmt.Fprintf(&kh, "%s,%s %s\n", h.Name, h.Addr, h.HostKeyLine)
		}
		// ConnectTimeout 30: a healthy host's handshake must not time out on a
		// loaded test machine; tests that need a short one set it themselves.
		fmt.Fprintf(&cfg, "Host %s\n  HostName %s\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  ConnectTimeout 30\n\n",
			h.Name, h.Addr, h.Port, h.User, r.KeyPath, r.KnownHosts)
	}
	if err := writeFile(r.KnownHosts, []byte(kh.String()), 0o644); err != nil {
		return err
	}
	return writeFile(r.SSHConfig, []byte(cfg.String()), 0o644)
}

func (r *Rig) sshdConfig(h *Host) string {
	c := fmt.Sprintf(`# sparkrig test rig: sshd for host %s (throw-away keys)
Port %d
ListenAddress %s
HostKey %s
PidFile none
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
MaxStartups 200
MaxSessions 64
LogLevel ERROR
`, h.Name, h.Port, h.Addr, filepath.Join(h.Dir, "ssh_host_ed25519_key"), filepath.Join(r.Dir, "authorized_keys"))
	if h.spec.HangAfterAuth {
		c += "ForceCommand /bin/sleep 3600\n"
	}
	return c
}

// startSSHDs starts every host's sshd in its namespace, inside a private
// mount namespace that carries the host's fixture overlays, and waits until
// each listens.
func (r *Rig) startSSHDs() error {
	for _, h := range r.Hosts {
		if err := writeFile(filepath.Join(h.Dir, "sshd_config"), []byte(r.sshdConfig(h)), 0o644); err != nil {
			return err
		}
		if err := h.startSSHD(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(r.Hosts))
	for i, h := range r.Hosts {
		if h.spec.NoSSHD {
			continue
		}
		wg.Go(func() {
			if err := waitTCP(ctx, fmt.Sprintf("%s:%d", h.Addr, h.Port)); err != nil {
				log, _ := os.ReadFile(filepath.Join(h.Dir, "sshd.log"))
				errs[i] = fmt.Errorf("%s: %w: %s", h.Name, err, strings.TrimSpace(string(log)))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (h *Host) startSSHD() error {
	final := fmt.Sprintf("exec %s -D -e -f %s", sshdPath, filepath.Join(h.Dir, "sshd_config"))
	if h.spec.NoSSHD {
		// Something must hold the mount namespace for Exec; it is not sshd.
		final = "exec /bin/sleep 2147483647"
	}
	script, err := h.mountScript()
	if err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(h.Dir, "sshd.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	// Own UTS namespace: the host answers to its own name (uname -n).
	script = fmt.Sprintf("echo %s > /proc/sys/kernel/hostname\n", h.Name) + script
	cmd := exec.Command("ip", "netns", "exec", h.NS, "unshare", "--uts", "/bin/sh", "-ec", script+final)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sshd on %s: %w", h.Name, err)
	}
	h.sshd, h.sshdPID = cmd, cmd.Process.Pid
	go cmd.Wait() // reap; teardown kills it by namespace
	return nil
}

// mountScript lays the fixture root over the host's filesystem. `ip netns
// exec` already runs us in a fresh mount namespace (slave of the root one)
// with the namespace's own /sys, so none of this is seen outside the host.
// /etc, /root, /run and other top-level trees get a writable overlay whose
// upper layer is a tmpfs private to the host; /sys subtrees are read-only
// overlays; /proc files are bind mounts.
func (h *Host) mountScript() (string, error) {
	root := filepath.Join(h.Dir, "root")
	rw := filepath.Join(h.Dir, "rw")
	if err := os.MkdirAll(rw, 0o755); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mount -t tmpfs sparkrig-testrig %s\n", rw)
	tops, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	for _, t := range tops {
		name := t.Name()
		switch name {
		case "sys":
			subs, _ := os.ReadDir(filepath.Join(root, "sys"))
			for _, s := range subs {
				fmt.Fprintf(&b, "mount -t overlay sparkrig-testrig -o lowerdir=%s:/sys/%s /sys/%s\n", filepath.Join(root, "sys", s.Name()), s.Name(), s.Name())
			}
		case "proc":
			err := filepath.WalkDir(filepath.Join(root, "proc"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(root, p)
					fmt.Fprintf(&b, "mount --bind %s /%s\n", p, rel)
				}
				return err
			})
			if err != nil {
				return "", err
			}
		default:
			if st, err := os.Stat("/" + name); err != nil || !st.IsDir() {
				return "", fmt.Errorf("host %s: fixture path /%s: only existing top-level directories can be overlaid", h.Name, name)
			}
			up, work := filepath.Join(rw, name, "u"), filepath.Join(rw, name, "w")
			fmt.Fprintf(&b, "mkdir -p %s %s\nmount -t overlay sparkrig-testrig -o lowerdir=%s:/%s,upperdir=%s,workdir=%s /%s\n",
				up, work, filepath.Join(root, name), name, up, work, name)
		}
	}
	b.WriteString(h.pciMount)
	// Every directory a node may write is private to the host, whether or not
	// the fixture lays files there: sparkrig's fix writes /etc and /var/backups,
	// bench writes /tmp, sshd /run. /tmp comes last because the rig's own files
	// (and the tmpfs above) live under it and must still be reachable while
	// the others are mounted; they stay readable through the overlay's lower layer.
	covered := map[string]bool{}
	for _, t := range tops {
		covered[t.Name()] = true
	}
	for _, dir := range PrivateDirs {
		top, _, _ := strings.Cut(dir, "/")
		if covered[top] || covered[dir] {
			continue
		}
		up, work := filepath.Join(rw, "private", dir, "u"), filepath.Join(rw, "private", dir, "w")
		fmt.Fprintf(&b, "mkdir -p %s %s /%s\nmount -t overlay sparkrig-testrig -o lowerdir=/%s,upperdir=%s,workdir=%s /%s\n",
			up, work, dir, dir, up, work, dir)
	}
	return b.String(), nil
}

// PrivateDirs are the directories every rig host sees as its own: writes to
// them land in the host's tmpfs, never on the machine running the rig or on
// another host. /tmp is last (see mountScript).
var PrivateDirs = []string{"etc", "var", "run", "root", "usr/local", "tmp"}
