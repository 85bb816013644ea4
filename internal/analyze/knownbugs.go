package analyze

import (
	"bytes"
	"fmt"
	"strings"

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
	// invalidArg counts the invalid-argument failures; files are their
	// source files ("transport.cc"), "" for a line without one (a
	// framework quoting NCCL's last error)
	invalidArg int
	files      []string
}

const maxCUDAFiles = 8

var (
	litInvalidArg  = []byte("invalid argument")
	litCudaFailure = []byte("Cuda failure")
	litNCCLVersion = []byte("NCCL version ")
)

// observe reads one line the error catalogue reads.
func (c *cudaFacts) observe(line []byte) {
	if c.version == "" {
		if j := bytes.Index(line, litNCCLVersion); j >= 0 {
			c.version = leadingVersion(line[j+len(litNCCLVersion):])
		}
	}
	if !bytes.Contains(line, litInvalidArg) {
		return
	}
	j := bytes.Index(line, litCudaFailure)
	if j < 0 {
		return
	}
	c.invalidArg++
	if len(c.files) < maxCUDAFiles {
		c.files = append(c.files, sourceFileBefore(line[:j]))
	}
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
	b = bytes.TrimSpace(b)
	b = bytes.TrimSuffix(b, []byte("NCCL WARN"))
	b = bytes.TrimSpace(b)
	if k := bytes.LastIndexByte(b, ' '); k >= 0 {
		b = b[k+1:]
	}
	colon := bytes.LastIndexByte(b, ':')
	if colon <= 0 || !digits(b[colon+1:]) {
		return ""
	}
	f := b[:colon]
	if k := bytes.LastIndexByte(f, '/'); k >= 0 {
		f = f[k+1:]
	}
	if !bytes.HasSuffix(f, []byte(".cc")) && !bytes.HasSuffix(f, []byte(".cu")) && !bytes.HasSuffix(f, []byte(".h")) {
		return ""
	}
	return string(f)
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
