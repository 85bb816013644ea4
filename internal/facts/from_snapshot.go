package facts

import (
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

// Source names recorded in Node.Sources.
const (
	SrcOSRelease  = "os-release"
	SrcDGXRelease = "dgx-release"
	SrcKernel     = "kernel"
	SrcMeminfo    = "meminfo"
	SrcCPU        = "cpuinfo"
	SrcModules    = "modules"
	SrcLimits     = "limits"
	SrcLimitsConf = "limits-conf"
	SrcTHP        = "thp"
	SrcGovernor   = "cpufreq"
	SrcSysctl     = "sysctl"
	SrcNvidiaSMI  = "nvidia-smi"
	SrcNetSysfs   = "sysfs-net"
	SrcIPAddr     = "ip-addr"
	SrcRDMA       = "rdma"
	SrcPCI        = "pci"
	SrcNetConfig  = "net-config"
	SrcNCCLConf   = "nccl-conf"
	SrcNCCLLib    = "nccl-lib"
	SrcEnv        = "env"
	SrcKernelLog  = "kernel-log"
	SrcEthtool    = "ethtool"
	SrcIOMMU      = "iommu"
	SrcNCCLBuild  = "nccl-build-id"
)

// builder carries the snapshot and the node being filled.
type builder struct {
	s *snapshot.Snapshot
	n *Node
}

// FromSnapshot parses every source of a snapshot into a Node. A source that
// is absent or unparsable leaves its facts empty and says so in Node.Sources.
func FromSnapshot(s *snapshot.Snapshot) *Node {
	n := &Node{
		Host: s.Manifest.Host, GPUs: []GPU{}, NetDevs: []NetDev{}, RDMA: []RDMADev{}, PCI: []PCIFunc{},
		Sysctls: map[string]string{}, Modules: []string{}, NetConfig: []IfaceConfig{},
		NCCL:      NCCL{ConfFile: map[string]string{}, Env: map[string]string{}},
		KernelLog: KernelLog{XIDs: []XID{}, MLX5: []LogLine{}},
		Sources:   map[string]SourceStatus{},
	}
	b := &builder{s: s, n: n}
	for _, step := range []func(){
		b.system, b.memory, b.cpu, b.limits, b.sysctls, b.gpus, b.pci, b.netdevs, b.rdma,
		b.netConfig, b.nccl, b.kernelLog, b.routing, b.iommu,
	} {
		step()
	}
	return n
}

func (b *builder) set(src, status, detail string) {
	b.n.Sources[src] = SourceStatus{Status: status, Detail: detail}
}

// file returns a captured file, recording the source's status when absent.
func (b *builder) file(src, p string) ([]byte, bool) {
	if data, ok := b.s.File(p); ok {
		return data, true
	}
	it, found := b.s.Item(snapshot.KindFile, p)
	switch {
	case !found:
		b.set(src, StatusNotCaptured, p)
	default:
		b.set(src, it.Status, strings.TrimSpace(p+": "+it.Error))
	}
	return nil, false
}

// cmd returns a command's stdout when it ran and exited 0, recording why not.
func (b *builder) cmd(src, id string) ([]byte, bool) {
	out, it, ok := b.s.Cmd(id)
	switch {
	case !ok && it.Name == "":
		b.set(src, StatusNotCaptured, id)
	case !ok:
		b.set(src, it.Status, it.Error)
	case it.ExitCode != 0:
		msg := firstLine(b.s.Stderr(id))
		status := snapshot.StatusError
		if strings.Contains(msg, "not permitted") || strings.Contains(msg, "ermission denied") {
			status = snapshot.StatusDenied
		}
		b.set(src, status, strings.TrimSpace(id+" exited "+strconv.Itoa(it.ExitCode)+": "+msg))
		return out, false
	default:
		return out, true
	}
	return nil, false
}

// matching lists captured paths (files and links, status ok) matching glob.
func (b *builder) matching(glob string) []string {
	var out []string
	// what precedes the first pattern character must match as it is:
	// most items are told apart by it without path.Match
	lit := glob
	if i := strings.IndexAny(glob, `*?[\`); i >= 0 {
		lit = glob[:i]
	}
	for _, it := range b.s.Manifest.Items {
		if it.Kind == snapshot.KindCmd || it.Status != snapshot.StatusOK || !strings.HasPrefix(it.Name, lit) {
			continue
		}
		if ok, _ := path.Match(glob, it.Name); ok {
			out = append(out, it.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (b *builder) value(p string) string {
	d, _ := b.s.File(p)
	return trimValue(d)
}

func (b *builder) system() {
	n := b.n
	n.Hostname = b.value("/proc/sys/kernel/hostname")
	if d, ok := b.file(SrcOSRelease, "/etc/os-release"); ok {
		n.OS = parseOSRelease(d)
		b.set(SrcOSRelease, "ok", "")
	}
	if d, ok := b.file(SrcDGXRelease, "/etc/dgx-release"); ok {
		n.DGX = parseDGXRelease(d)
		b.set(SrcDGXRelease, "ok", "")
	}
	n.OS.Kernel = b.value("/proc/sys/kernel/osrelease")
	if out, ok := b.cmd(SrcKernel, "uname"); ok && n.OS.Kernel == "" {
		if f := strings.Fields(string(out)); len(f) > 2 {
			n.OS.Kernel = f[2]
		}
	}
	if out, ok := b.cmd(SrcKernel, "uname-m"); ok {
		n.OS.Arch = trimValue(out)
	}
	if n.OS.Kernel != "" {
		b.set(SrcKernel, "ok", "")
	}
	n.OS.Cmdline = b.value("/proc/cmdline")
	if d, ok := b.file(SrcModules, "/proc/modules"); ok {
		n.Modules = parseModules(d)
		b.set(SrcModules, "ok", "")
	}
}

func (b *builder) memory() {
	if d, ok := b.file(SrcMeminfo, "/proc/meminfo"); ok {
		b.n.Memory = memoryFrom(ParseMeminfo(d))
		b.set(SrcMeminfo, "ok", "")
	}
	if d, ok := b.file(SrcTHP, "/sys/kernel/mm/transparent_hugepage/enabled"); ok {
		b.n.Memory.THP = parseSelectedMode(d)
		b.set(SrcTHP, "ok", "")
	}
}

func (b *builder) cpu() {
	if d, ok := b.file(SrcCPU, "/proc/cpuinfo"); ok {
		b.n.CPU.Model, b.n.CPU.Cores = parseCPUInfo(d)
		b.set(SrcCPU, "ok", "")
	}
	seen := map[string]bool{}
	for _, p := range b.matching("/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor") {
		if g := b.value(p); g != "" && !seen[g] {
			seen[g] = true
			b.n.CPU.Governors = append(b.n.CPU.Governors, g)
		}
	}
	if len(seen) > 0 {
		b.set(SrcGovernor, "ok", "")
	} else {
		b.set(SrcGovernor, snapshot.StatusMissing, "no cpufreq scaling_governor (no frequency scaling exposed)")
	}
	b.n.CPU.NUMANodes = len(b.matching("/sys/devices/system/node/node*/cpulist"))
}

func (b *builder) limits() {
	if d, ok := b.file(SrcLimits, "/proc/self/limits"); ok {
		b.n.Limits.MemlockKiB = parseProcLimits(d)
		b.set(SrcLimits, "ok", "")
	}
	files := append(b.matching("/etc/security/limits.conf"), b.matching("/etc/security/limits.d/*")...)
	for _, p := range files {
		d, _ := b.s.File(p)
		if v := parseLimitsConfMemlock(d); v != "" {
			b.n.Limits.ConfiguredMemlock = v
		}
	}
	if len(files) > 0 {
		b.set(SrcLimitsConf, "ok", "")
	} else {
		b.set(SrcLimitsConf, snapshot.StatusMissing, "no /etc/security/limits.conf captured")
	}
}

func (b *builder) sysctls() {
	for _, p := range b.matching("/proc/sys/*/*") {
		b.n.Sysctls[sysctlName(p)] = normalizeSysctl(mustFile(b.s, p))
	}
	for _, p := range slices.Concat(b.matching("/proc/sys/*/*/*"), b.matching("/proc/sys/*/*/*/*"), b.matching("/proc/sys/*/*/*/*/*")) {
		b.n.Sysctls[sysctlName(p)] = normalizeSysctl(mustFile(b.s, p))
	}
	delete(b.n.Sysctls, "kernel.hostname")
	delete(b.n.Sysctls, "kernel.osrelease")
	if len(b.n.Sysctls) > 0 {
		b.set(SrcSysctl, "ok", "")
	} else {
		b.set(SrcSysctl, snapshot.StatusMissing, "no /proc/sys values captured")
	}
}

func mustFile(s *snapshot.Snapshot, p string) []byte {
	d, _ := s.File(p)
	return d
}

func (b *builder) gpus() {
	out, ok := b.cmd(SrcNvidiaSMI, "nvidia-smi-q")
	if !ok {
		if v := b.value("/proc/driver/nvidia/version"); v != "" {
			b.n.Driver.Version = DriverVersionFromProc([]byte(v))
		}
		return
	}
	drv, gpus, err := parseNvidiaSMIXML(out)
	if err != nil {
		b.set(SrcNvidiaSMI, "unparsable", err.Error())
		return
	}
	b.n.Driver, b.n.GPUs = drv, gpus
	b.set(SrcNvidiaSMI, "ok", "")
}

func (b *builder) kernelLog() {
	out, ok := b.cmd(SrcKernelLog, "dmesg")
	if !ok {
		dmesgWhy := b.n.Sources[SrcKernelLog]
		out, ok = b.cmd(SrcKernelLog, "journal-kernel")
		// journalctl exits 0 with no lines when it may not read the system
		// journal; only its stderr tells, and an empty log must not pass.
		if msg := firstLine(b.s.Stderr("journal-kernel")); ok && msg != "" {
			b.set(SrcKernelLog, snapshot.StatusDenied, "journalctl -k: "+msg)
			return
		}
		// The capture keeps the boot's "Linux version" line; without any line
		// the journal was not readable (journalctl says nothing then).
		if ok && len(strings.TrimSpace(string(out))) == 0 {
			b.set(SrcKernelLog, snapshot.StatusDenied, "dmesg refused and journalctl -k returned no kernel messages (run with sudo)")
			return
		}
		if !ok && dmesgWhy.Status != "" {
			b.n.Sources[SrcKernelLog] = dmesgWhy
		}
	}
	if !ok {
		return
	}
	b.n.KernelLog = parseKernelLog(out)
	iommuFromKernelLog(out, &b.n.IOMMU)
	b.set(SrcKernelLog, "ok", "")
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// iommu reads the command line's IOMMU setting and each group's domain
// type; the kernel log's part is read with the log.
func (b *builder) iommu() {
	b.n.IOMMU.Cmdline = iommuFromCmdline(b.n.OS.Cmdline)
	for _, p := range b.matching("/sys/kernel/iommu_groups/*/type") {
		if b.n.IOMMU.GroupTypes == nil {
			b.n.IOMMU.GroupTypes = map[string]string{}
		}
		b.n.IOMMU.GroupTypes[path.Base(path.Dir(p))] = b.value(p)
	}
	switch {
	case len(b.n.IOMMU.GroupTypes) > 0:
		b.set(SrcIOMMU, "ok", "")
	case b.n.IOMMU.Cmdline != "" || b.n.IOMMU.DefaultDomain != "":
		b.set(SrcIOMMU, "ok", "no /sys/kernel/iommu_groups: from the kernel command line and log")
	default:
		if _, found := b.s.Item(snapshot.KindFile, "/sys/kernel/iommu_groups/*/type"); found {
			b.set(SrcIOMMU, snapshot.StatusMissing, "no IOMMU groups (no IOMMU, or it is off)")
		} else {
			b.set(SrcIOMMU, StatusNotCaptured, "/sys/kernel/iommu_groups")
		}
	}
}
