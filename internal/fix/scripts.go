package fix

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/sparkrig/sparkrig/internal/shell"
)

// BackupRoot holds one directory per apply, named by its UTC time.
const BackupRoot = "/var/backups/sparkrig"

// Activation says how written settings take effect on a host.
type Activation int

const (
	// ActivateNetplan runs `netplan apply` and `sysctl --system`: a real node.
	ActivateNetplan Activation = iota
	// ActivateIP sets the rails' addresses and MTU with ip(8) and loads the
	// drop-in with `sysctl -p`: for hosts where netplan's renderer does not
	// run, such as network namespaces.
	ActivateIP
)

// Stamp names a backup directory after t.
func Stamp(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

// stageScript backs up every file the host plan touches, records the
// runtime state restore needs, writes the new files, arms the dead-man
// timer and starts the activation detached, so that it completes and the
// timer fires even if this SSH session dies with the network.
func stageScript(hp HostPlan, stamp string, act Activation, deadman time.Duration) string {
	dir := path.Join(BackupRoot, stamp)
	var b strings.Builder
	// The body is a function called on the last line: a script cut off in
	// transit defines nothing and runs nothing.
	b.WriteString("stage() {\n")
	fmt.Fprintf(&b, "set -eu\numask 022\nB=%s\n", shell.Quote(dir))
	b.WriteString(sshGuard(hp))
	b.WriteString("fail() { echo \"$1\" >&2; exit 4; }\n")
	for _, c := range hp.Files {
		if !c.OldExists {
			fmt.Fprintf(&b, "[ ! -e %[1]s ] || fail '%[1]s appeared since the plan was made; plan again'\n", c.Path)
			continue
		}
		fmt.Fprintf(&b, "[ \"$(sha256sum < %[1]s | cut -d' ' -f1)\" = %x ] || fail '%[1]s changed since the plan was made; plan again'\n", c.Path, sha256.Sum256(c.Old))
	}
	b.WriteString("[ ! -e \"$B\" ] || fail \"backup $B exists already\"\nmkdir -p \"$B/files\"\n: > \"$B/manifest\"\n: > \"$B/created-dirs\"\n")
	for _, c := range hp.Files {
		// cp follows a symlink: the backup holds what the link points at,
		// and the restore writes it back through the link, which stays.
		fmt.Fprintf(&b, "if [ -e %[1]s ]; then mkdir -p \"$B/files%[2]s\"; cp -p %[1]s \"$B/files%[1]s\"; printf '%%s\\tpresent\\n' %[1]s >> \"$B/manifest\"; else printf '%%s\\tabsent\\n' %[1]s >> \"$B/manifest\"; fi\n", c.Path, path.Dir(c.Path))
	}
	b.WriteString(": > \"$B/links\"\n")
	for _, r := range hp.Rails {
		fmt.Fprintf(&b, "printf '%%s %%s %%s\\n' %[1]s \"$(cat /sys/class/net/%[1]s/mtu 2>/dev/null || echo -)\" \"$(ip -o -4 addr show dev %[1]s scope global 2>/dev/null | awk '{printf \"%%s \", $4}')\" >> \"$B/links\"\n", r.NetDev)
	}
	b.WriteString(": > \"$B/sysctls\"\n")
	for _, k := range sortedKeys(hp.Sysctls) {
		fmt.Fprintf(&b, "printf '%%s\\t%%s\\n' %s \"$(sysctl -n %s 2>/dev/null | tr '\\t' ' ')\" >> \"$B/sysctls\"\n", k, k)
	}
	writeFile(&b, "$B/restore.sh", restoreScript(hp, act), 0o755)
	writeFile(&b, "$B/activate.sh", activateScript(hp, act), 0o755)
	writeFile(&b, "$B/deadman.sh", deadmanScript(deadman), 0o755)
	// The timer is armed before anything is written: from here on, a
	// controller that never comes back means the backup is restored.
	// Detached (a new session, all streams redirected) so neither waits on
	// nor dies with this SSH session.
	b.WriteString(`if command -v setsid >/dev/null 2>&1; then D=setsid; else D=nohup; fi
$D sh "$B/deadman.sh" </dev/null >/dev/null 2>&1 &
echo $! > "$B/deadman.pid"
`)
	for _, c := range hp.Files {
		if !c.Changed() {
			continue
		}
		d := path.Dir(c.Path)
		fmt.Fprintf(&b, "[ -d %[1]s ] || { mkdir -p %[1]s; echo %[1]s >> \"$B/created-dirs\"; }\n", d)
		writeFile(&b, c.Path, string(c.New), c.Mode)
	}
	b.WriteString(`$D sh "$B/activate.sh" </dev/null > "$B/activate.log" 2>&1 &
echo "backup $B"
}
stage
`)
	return b.String()
}

// sshGuard refuses, on the host itself, to go on when the SSH session
// arrives on an interface the plan reconfigures (the plan's own guard saw the
// facts; this sees the live route).
func sshGuard(hp HostPlan) string {
	var b strings.Builder
	b.WriteString("if [ -n \"${SPARKRIG_SSH_FROM:-}\" ]; then\n  sshif=$(ip -o route get \"$SPARKRIG_SSH_FROM\" 2>/dev/null | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p')\n  case \"$sshif\" in\n")
	var names []string
	for _, r := range hp.Rails {
		names = append(names, r.NetDev)
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "  %s) echo \"refused: this SSH session arrives on $sshif, which the plan reconfigures\" >&2; exit 3 ;;\n", strings.Join(names, "|"))
	}
	b.WriteString("  esac\nfi\n")
	return b.String()
}

// writeFile emits sh that writes content to p atomically with mode. Where
// p is a symlink, the file it points at is replaced and the link kept.
func writeFile(b *strings.Builder, p, content string, mode fs.FileMode) {
	enc := base64.StdEncoding.EncodeToString([]byte(content))
	fmt.Fprintf(b, "t=\"%[1]s\"; [ ! -L \"$t\" ] || t=$(readlink -f \"$t\"); printf '%%s' '%[2]s' | base64 -d > \"$t.sparkrig-new\" && chmod %04[3]o \"$t.sparkrig-new\" && mv -f \"$t.sparkrig-new\" \"$t\"\n", p, enc, mode)
}

// activateScript makes the written settings take effect and records the
// exit status in $B/activate.rc.
func activateScript(hp HostPlan, act Activation) string {
	var b strings.Builder
	b.WriteString("B=$(dirname \"$0\")\nrc=0\n")
	netplan, sysctl := hp.Reactivate != nil, false
	for _, c := range hp.Files {
		netplan = netplan || (c.Path == NetplanPath && c.Changed())
		sysctl = sysctl || (c.Path == SysctlPath && c.Changed())
	}
	switch act {
	case ActivateNetplan:
		if netplan {
			b.WriteString("netplan apply || rc=$?\n")
		}
		if sysctl {
			b.WriteString("sysctl --system >/dev/null || rc=$?\n")
		}
	case ActivateIP:
		if netplan {
			for _, r := range hp.Rails {
				fmt.Fprintf(&b, "ip link set dev %[1]s mtu %[2]d || rc=$?\nip -4 addr flush dev %[1]s scope global || rc=$?\n", r.NetDev, r.MTU)
				if r.Addr != "" {
					fmt.Fprintf(&b, "ip addr add %s dev %s || rc=$?\n", r.Addr, r.NetDev)
				}
				fmt.Fprintf(&b, "ip link set dev %s up || rc=$?\n", r.NetDev)
			}
			for _, r := range hp.Rails {
				for _, rt := range r.Routes {
					fmt.Fprintf(&b, "ip route replace %s via %s dev %s || rc=$?\n", rt.To, rt.Via, r.NetDev)
				}
			}
		}
		if sysctl {
			fmt.Fprintf(&b, "sysctl -q -p %s || rc=$?\n", SysctlPath)
		}
	}
	b.WriteString("echo $rc > \"$B/activate.rc\"\n")
	return b.String()
}

// restoreScript puts back the backed-up files, re-activates them, and
// restores the rails' addresses and MTU and the sysctls as they were.
func restoreScript(hp HostPlan, act Activation) string {
	var b strings.Builder
	b.WriteString(`B=$(cd "$(dirname "$0")" && pwd)
T=$(printf '\t')
while IFS="$T" read -r p state; do
  if [ "$state" = present ]; then mkdir -p "$(dirname "$p")"; cp -p "$B/files$p" "$p"
  elif [ -L "$p" ]; then rm -f "$(readlink -f "$p")"
  else rm -f "$p"; fi
done < "$B/manifest"
[ ! -e "$B/created-dirs" ] || sort -r "$B/created-dirs" | while read -r d; do rmdir "$d" 2>/dev/null || true; done
`)
	if act == ActivateNetplan {
		b.WriteString("netplan apply || true\n")
	}
	b.WriteString(`while read -r d mtu addrs; do
  [ "$mtu" = - ] && continue
  ip link set dev "$d" mtu "$mtu" || true
  ip -4 addr flush dev "$d" scope global || true
  for a in $addrs; do ip addr add "$a" dev "$d" || true; done
done < "$B/links"
while IFS="$T" read -r k v; do [ -z "$v" ] || sysctl -q -w "$k=$v" || true; done < "$B/sysctls"
date -u +%Y-%m-%dT%H:%M:%SZ > "$B/restored"
`)
	return b.String()
}

// The dead-man timer and the controller race to decide a backup's fate;
// mkdir of $B/decided is atomic, so exactly one of them wins: the timer
// restores, or the controller confirms (or restores) and the timer stands down.

// deadmanScript restores the backup unless the controller decided first.
func deadmanScript(d time.Duration) string {
	return fmt.Sprintf("B=$(dirname \"$0\")\nsleep %d\nmkdir \"$B/decided\" 2>/dev/null || exit 0\nsh \"$B/restore.sh\" > \"$B/restore.log\" 2>&1\n", int(d.Seconds()))
}

// confirmScript keeps the change: the controller reached the host again and
// the checks held.
func confirmScript(dir string) string {
	return fmt.Sprintf("B=%s\nmkdir \"$B/decided\" 2>/dev/null || { echo 'the dead-man timer has already rolled back' >&2; exit 5; }\ntouch \"$B/confirmed\"\nkill \"$(cat \"$B/deadman.pid\")\" 2>/dev/null || true\n", shell.Quote(dir))
}

// restoreNowScript restores at once, or waits for the timer's restore if it
// has already begun.
func restoreNowScript(dir string) string {
	return fmt.Sprintf("B=%s\nif mkdir \"$B/decided\" 2>/dev/null; then\n  kill \"$(cat \"$B/deadman.pid\")\" 2>/dev/null || true\n  sh \"$B/restore.sh\" > \"$B/restore.log\" 2>&1\nelse\n  i=0; while [ ! -e \"$B/restored\" ] && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done\nfi\necho \"restored $B\"\n", shell.Quote(dir))
}

// rollbackLatestScript restores the newest backup not yet restored.
func rollbackLatestScript() string {
	return fmt.Sprintf(`R=%s
B=""
for d in $(ls -1d "$R"/*/ 2>/dev/null | sort -r); do d=${d%%/}; [ -e "$d/restored" ] || { B=$d; break; }; done
[ -n "$B" ] || { echo "no backup to restore under $R" >&2; exit 6; }
mkdir "$B/decided" 2>/dev/null && kill "$(cat "$B/deadman.pid")" 2>/dev/null
sh "$B/restore.sh" > "$B/restore.log" 2>&1 || { cat "$B/restore.log" >&2; exit 7; }
echo "restored $B"
`, shell.Quote(BackupRoot))
}

// statusScript reports a backup's state: whether activation finished and
// whether it has been restored.
func statusScript(dir string) string {
	return fmt.Sprintf("B=%s\necho \"activate $(cat \"$B/activate.rc\" 2>/dev/null || echo pending)\"\n[ -e \"$B/restored\" ] && echo restored || echo live\n", shell.Quote(dir))
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
