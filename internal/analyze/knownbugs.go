package analyze

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/sparkrig/sparkrig/internal/diagnose"
	"github.com/sparkrig/sparkrig/internal/facts"
	"github.com/sparkrig/sparkrig/internal/report"
)

// cudaFacts is what the error lines say of NCCL's CUDA failures that a
// signature alone cannot tell: the release named anywhere in the text (a
// framework's "NCCL error in: …, NCCL version 2.18.1" line as well as
// NCCL's own banner) and the source file of each "Cuda failure …
// 'invalid argument'" line. Bounded: one version, a few files.
type cudaFacts struct {
	version string
	// afterNCCL: the line read last ended with "NCCL", so a line that
	// opens with "version 2.14.3" is the framework's version line wrapped
	afterNCCL bool
	// invalidArg counts the invalid-argument failures; files are their
	// source files ("transport.cc"), "" for a line without one (a
	// framework quoting NCCL's last error)
	invalidArg int
	files      []string
	// notSupported are the "file:line" of "Cuda failure … 'operation not
	// supported'" lines ("init.cc:426"), "" for one without
	notSupported []string
	// testFailure is the first line of nccl-tests' own error macros
	// ("host: Test NCCL failure alltoall.cu:62 '…'", "Test CUDA failure")
	// and oom the first CUDA out-of-memory line, each cut to maxFactLine
	testFailure, oom string
	// maxBytes is the largest size of an nccl-tests header (-e), gpu the
	// GPU name of its first device line
	maxBytes int64
	gpu      string
	// hopper: a line names a Hopper GPU (H100, H200, GH200)
	hopper bool
}

// maxFactLine bounds a line kept as evidence.
const maxFactLine = 300

const maxCUDAFiles = 8

var (
	litFailure     = []byte("failure ")
	litFailureWord = []byte("failure")
	litTestNCCL    = []byte("Test NCCL ")
	litTestCUDA    = []byte("Test CUDA ")
	litCuda        = []byte("Cuda ")
	litOutOfMemory = []byte("out of memory")
	litMaxBytes    = []byte(" maxBytes ")
	litRankDevice  = []byte(" device ")
	litInvalidArg  = []byte("invalid argument")
	litCudaFailure = []byte("Cuda failure")
	litNCCLVersion = []byte("NCCL version ")
	litNCCLWord    = []byte(" NCCL")
	litVersionWord = []byte("version ")
	// CUDA error 801, cudaErrorNotSupported
	litNotSupported = []byte("'operation not supported'")
	litNlinks       = []byte(" nlinks ")
)

// hopperShown: the lines show a Hopper GPU (sm90): its name, or the hit's
// line naming more NVLinks than the 12 of earlier GPUs (Hopper has 18).
func hopperShown(c cudaFacts, h diagnose.ErrorHit) bool {
	if c.hopper || strings.Contains(c.gpu, "H100") || strings.Contains(c.gpu, "H200") {
		return true
	}
	line := []byte(h.First)
	i := bytes.Index(line, litNlinks)
	if i < 0 {
		return false
	}
	n, rest := 0, line[i+len(litNlinks):]
	for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
		n = n*10 + int(rest[0]-'0')
		rest = rest[1:]
	}
	return n > 12
}

// observe reads one line the error catalogue reads.
func (c *cudaFacts) observe(line []byte) {
	if c.version == "" {
		// most lines hold no 'v' (vectorised, one search), so no "NCCL
		// version " either: bytes.Index would try each 'N' of "NCCL"
		j := -1
		if bytes.IndexByte(line, 'v') >= 0 {
			j = bytes.Index(line, litNCCLVersion)
		}
		if j >= 0 {
			c.version = leadingVersion(line[j+len(litNCCLVersion):])
		} else if c.afterNCCL {
			if t := bytes.TrimLeft(line, " \t"); bytes.HasPrefix(t, litVersionWord) {
				c.version = leadingVersion(t[len(litVersionWord):])
			}
		}
		c.afterNCCL = bytes.HasSuffix(bytes.TrimRight(line, " \r"), litNCCLWord)
	}
	// "failure" first: one search passes over the lines that lack it
	// (all but a few), which hold neither "failure " nor "Cuda failure"
	failure := bytes.Contains(line, litFailureWord)
	if len(line) > 0 && line[0] == '#' {
		c.observeHeader(line)
	} else if failure {
		c.observeTest(line)
	}
	if !c.hopper {
		c.hopper = namesHopper(line)
	}
	if !failure {
		return
	}
	j := bytes.Index(line, litCudaFailure)
	if j < 0 {
		return
	}
	inv, nsup := bytes.Contains(line, litInvalidArg), bytes.Contains(line, litNotSupported)
	if !inv && !nsup {
		return
	}
	if nsup && len(c.notSupported) < maxCUDAFiles {
		f, n := sourceLineBefore(line[:j])
		if f != "" {
			f = fmt.Sprintf("%s:%d", f, n)
		}
		c.notSupported = append(c.notSupported, f)
	}
	if !inv {
		return
	}
	c.invalidArg++
	if len(c.files) < maxCUDAFiles {
		c.files = append(c.files, sourceFileBefore(line[:j]))
	}
}

// namesHopper: line names a Hopper GPU, "H100" or "H200" (GH200 holds
// H200), told by one byte search for the 'H's of both.
func namesHopper(line []byte) bool {
	for i := 0; ; {
		h := bytes.IndexByte(line[i:], 'H')
		if h < 0 {
			return false
		}
		i += h + 1
		if len(line)-i >= 3 && (string(line[i:i+3]) == "100" || string(line[i:i+3]) == "200") {
			return true
		}
	}
}

// observeTest keeps the first nccl-tests failure line and the first CUDA
// out-of-memory line (CUDA's name for cudaErrorMemoryAllocation in a CUDA
// failure NCCL or nccl-tests prints: "Cuda failure 2 'out of memory'",
// "Test CUDA failure common.cu:1009 'out of memory'"), of the lines that
// are not "#" lines.
func (c *cudaFacts) observeTest(line []byte) {
	i := bytes.Index(line, litFailure)
	if i < 0 {
		return
	}
	test := bytes.HasSuffix(line[:i], litTestNCCL) || bytes.HasSuffix(line[:i], litTestCUDA)
	if test && c.testFailure == "" {
		c.testFailure = factLine(line)
	}
	if c.oom == "" && bytes.Contains(line[i:], litOutOfMemory) && (test || bytes.HasSuffix(line[:i], litCuda)) {
		c.oom = factLine(line)
	}
}

// observeHeader reads, from the nccl-tests header, the largest size and
// the first GPU's name: nccl-tests' "# nThread 1 nGpus 1 minBytes 8
// maxBytes 17179869184 …" and the first "#  Rank  0 Group  0 Pid … device
// 0 [0x10] NVIDIA A100-SXM4-40GB" line.
func (c *cudaFacts) observeHeader(line []byte) {
	if c.maxBytes == 0 {
		if j := bytes.Index(line, litMaxBytes); j >= 0 {
			f := bytes.Fields(line[j+len(litMaxBytes):])
			if len(f) > 0 && digits(f[0]) && len(f[0]) < 19 {
				c.maxBytes, _ = strconv.ParseInt(string(f[0]), 10, 64)
			}
		}
	}
	if c.gpu == "" && bytes.Contains(line, litRankDevice) {
		if j := bytes.LastIndex(line, []byte("] ")); j >= 0 {
			c.gpu = factLine(line[j+2:])
		}
	}
}

// factLine is a line kept as evidence: trimmed, cut to maxFactLine bytes.
func factLine(line []byte) string {
	t := bytes.TrimSpace(line)
	if len(t) > maxFactLine {
		t = t[:maxFactLine]
	}
	return string(t)
}

// leadingVersion is the dotted release at the start of b ("2.18.1" of
// "2.18.1+cuda12.1"), "" when b opens with none.
func leadingVersion(b []byte) string {
	n := 0
	for n < len(b) && (b[n] == '.' || b[n] >= '0' && b[n] <= '9') {
		n++
	}
	v := strings.Trim(string(b[:n]), ".")
	if strings.Count(v, ".") < 1 {
		return ""
	}
	return v
}

// sourceFileBefore is the file of NCCL's "file.cc:123 NCCL WARN " before
// a message, its directory dropped ("transport.cc" of
// "transport.cc:154"); "" when the line names none.
func sourceFileBefore(b []byte) string {
	f, _ := sourceLineBefore(b)
	return f
}

// sourceLineBefore is sourceFileBefore with the line number.
func sourceLineBefore(b []byte) (string, int) {
	b = bytes.TrimSpace(b)
	b = bytes.TrimSuffix(b, []byte("NCCL WARN"))
	b = bytes.TrimSpace(b)
	if k := bytes.LastIndexByte(b, ' '); k >= 0 {
		b = b[k+1:]
	}
	colon := bytes.LastIndexByte(b, ':')
	if colon <= 0 || !digits(b[colon+1:]) {
		return "", 0
	}
	n, ok := leadingIntOf(b[colon+1:])
	f := b[:colon]
	if k := bytes.LastIndexByte(f, '/'); k >= 0 {
		f = f[k+1:]
	}
	if !ok || !bytes.HasSuffix(f, []byte(".cc")) && !bytes.HasSuffix(f, []byte(".cu")) && !bytes.HasSuffix(f, []byte(".h")) {
		return "", 0
	}
	return string(f), n
}

// leadingIntOf reads a short decimal number.
func leadingIntOf(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 6 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n, true
}

// memPoolLine is the line of init.cc that calls cudaMemPoolCreate in each
// NCCL release that does (2.23 and later; src/init.cc at each tag).
var memPoolLine = map[string]int{
	"2.23.4": 417, "2.24.3": 420, "2.25.1": 423,
	"2.26.2": 416, "2.26.3": 416, "2.26.5": 416, "2.26.6": 416,
	"2.27.3": 426, "2.27.5": 426, "2.27.6": 426, "2.27.7": 426,
	"2.28.3": 471, "2.28.7": 491, "2.28.9": 491,
	"2.29.2": 519, "2.29.3": 519, "2.29.7": 536,
	"2.30.3": 557, "2.30.4": 557, "2.30.7": 564,
}

// memPoolOnly are the lines of init.cc where, in every release from 2.23
// to 2.30.7, the only CUDA call is cudaMemPoolCreate: read without a
// release, a failure there is that call (417 and 471 hold another CUDA
// call in some release).
var memPoolOnly = map[int]bool{416: true, 420: true, 423: true, 426: true, 491: true, 519: true, 536: true, 557: true, 564: true}

// memPoolUnsupported: NCCL's cudaMemPoolCreate at init failed with
// 'operation not supported' (CUDA error 801): the GPU offers no
// stream-ordered memory pools, as a vGPU without unified memory
// (VMware with UVM not enabled) or a fractional vGPU instance, and NCCL
// 2.23 and later create one for every communicator. For: the WARN line
// from init.cc at that release's cudaMemPoolCreate line, or, with no
// release in the text, at a line where no release has another CUDA call.
// Against: another file, line or CUDA error, a release whose line differs
// or that the table does not hold.
func (a *analysis) memPoolUnsupported(c cudaFacts, logVersion string) {
	v := logVersion
	if v == "" {
		v = c.version
	}
	v = leadingVersion([]byte(v))
	for _, fl := range c.notSupported {
		f, ln, _ := strings.Cut(fl, ":")
		n, ok := leadingIntOf([]byte(ln))
		if f != "init.cc" || !ok {
			continue
		}
		if want, known := memPoolLine[v]; v != "" && (!known || want != n) || v == "" && !memPoolOnly[n] {
			continue
		}
		rel := "no NCCL release in the lines read; in every release from 2.23 to 2.30.7 that line of init.cc calls only cudaMemPoolCreate"
		if v != "" {
			rel = fmt.Sprintf("NCCL %s calls cudaMemPoolCreate at init.cc:%d", v, n)
		}
		a.cause(weightNCCLBugFix, report.Fail, "nccl.mempool-unsupported",
			"NCCL could not create its CUDA memory pool (cudaMemPoolCreate: operation not supported): this GPU offers no stream-ordered memory pools, as on a vGPU without unified memory (VMware with UVM not enabled) or a fractional vGPU instance, and NCCL 2.23 and later create one for every communicator",
			fmt.Sprintf("Cuda failure operation not supported at %s; %s", fl, rel),
			"enable unified memory for the vGPU (VMware: pciPassthruN.cfg.enable_uvm = 1 for each vGPU) or use a GPU or vGPU profile with memory pool support (cudaDeviceGetAttribute cudaDevAttrMemoryPoolsSupported is 1); NCCL before 2.23 does not create the pool",
			"https://github.com/NVIDIA/nccl/issues/2101; https://github.com/meta-pytorch/torchtune/issues/2556; https://github.com/AcademySoftwareFoundation/openvdb/issues/2255 (vGPU without memory pools: 801 operation not supported); NVIDIA/nccl src/init.cc v2.23.4-1 to v2.30.7-1 (CUDACHECK(cudaMemPoolCreate) in commAlloc; none before 2.23)")
		return
	}
}

// NCCL 2.18.1 to 2.18.5 read a peer's device address with an
// asynchronous copy and used it before the copy completed
// (src/transport.cc, ncclTransportP2pSetup), so connection setup fails at
// random with "Cuda failure 'invalid argument'"; 2.18.6 fixed it.
const (
	asyncAddrFirst   = "2.18.1"
	asyncAddrFixed   = "2.18.6"
	weightNCCLBugFix = 1.1
)

// asyncAddrCopy: the text names NCCL 2.18.1–2.18.5 and a CUDA
// invalid-argument failure from transport.cc or quoted without its file
// (a framework's "Last error:"). Against: another release or none named,
// an invalid-argument failure from any other file (nvls.cc is the
// NVSwitch fabric, enqueue.cc a launch), which says the failure is
// elsewhere.
func (a *analysis) asyncAddrCopy(c cudaFacts, logVersion string) {
	v := logVersion
	if v == "" {
		v = c.version
	}
	v = leadingVersion([]byte(v))
	if v == "" || c.invalidArg == 0 || facts.CompareVersions(v, asyncAddrFirst) < 0 || facts.CompareVersions(v, asyncAddrFixed) >= 0 {
		return
	}
	named := false
	for _, f := range c.files {
		switch f {
		case "transport.cc":
			named = true
		case "":
		default:
			return
		}
	}
	where := "quoted without its source file"
	if named {
		where = "raised in transport.cc"
	}
	a.cause(weightNCCLBugFix, report.Fail, "nccl.too-old",
		fmt.Sprintf("NCCL %s has a bug fixed in %s: connection setup read a peer address with an asynchronous copy and used it before the copy completed, so setup fails at random with the CUDA error invalid argument", v, asyncAddrFixed),
		fmt.Sprintf("NCCL version %s; %d Cuda failure invalid-argument line%s, %s", v, c.invalidArg, plural(c.invalidArg), where),
		"install NCCL "+asyncAddrFixed+" or later ("+sparkNCCLRelease()+"), or a framework build that bundles one (pip nvidia-nccl-cu12), and check the version printed by NCCL_DEBUG=INFO on every rank",
		"https://github.com/NVIDIA/nccl/issues/957; NVIDIA/nccl commit 4365458 (\"Fix cudaMemcpyAsync bug\", src/transport.cc), first in tag v2.18.6-1; src/transport.cc v2.18.1-1 to v2.18.5-1 lines 153-154")
}

// weightFixedLater ranks a release older than the fix above the message
// the fix is for.
const weightFixedLater = 0.1

// fixedLater: an error line whose signature names the NCCL release that
// fixed the bug behind it (fixed_in, with what changed: fixed_by in
// signatures.yaml), and a release in the lines older than that one. For:
// the message and the older release (NCCL's banner, a framework's "NCCL
// version" line, wrapped or not). Against: no release in the lines, the
// fixing release or a later one; a fix for Hopper GPUs only (fixed_for:
// sm90) with no Hopper GPU in the lines ranks below the message. The first such signature by rank is the
// one read.
func (a *analysis) fixedLater(hits []diagnose.ErrorHit, c cudaFacts, logVersion string) {
	v := logVersion
	if v == "" {
		v = c.version
	}
	v = leadingVersion([]byte(v))
	if v == "" {
		return
	}
	for _, h := range hits {
		s := h.Signature
		if s.FixedIn == "" || facts.CompareVersions(v, s.FixedIn) >= 0 {
			continue
		}
		score, only := h.Score+weightFixedLater, ""
		if s.FixedFor == "sm90" && !hopperShown(c, h) {
			// the fix concerns Hopper GPUs only and the lines show none:
			// a second reading, below the message's own
			score, only = h.Score-weightFixedLater, " (this matters only if the GPUs are Hopper ones: H100, H200, GH200; the lines name none)"
		}
		a.cause(score, report.Fail, "nccl.too-old",
			fmt.Sprintf("NCCL %s is older than %s, the release that fixed a cause of this error (%s): %s%s", v, s.FixedIn, s.Title, s.FixedBy, only),
			fmt.Sprintf("NCCL version %s; line %d: %s", v, h.Line, h.First),
			"install NCCL "+s.FixedIn+" or later ("+sparkNCCLRelease()+"), or a framework build or container that bundles one, and check the version NCCL_DEBUG=INFO prints on every rank; if the error stays, read the message itself (below)",
			strings.Join(s.Sources, "; "))
		return
	}
}
