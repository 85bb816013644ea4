package analyze

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/sparkrig/sparkrig/internal/expect"
	"github.com/sparkrig/sparkrig/internal/report"
)

// mlx5Dump is libmlx5's dump of the first error completion in a paste:
// "mlx5: <host>: got completion with error:" and the completion's 64
// bytes as four lines of four 32-bit words (rdma-core providers/mlx5/cq.c,
// dump_cqe). The syndrome and the vendor syndrome are its bytes 55 and 54
// (struct mlx5_err_cqe, providers/mlx5/mlx5dv.h): the last two bytes of
// the fourth line's second word.
type mlx5Dump struct {
	// started is the header's line number while its dump is read, 0
	// otherwise; rows is how many dump lines have been read since
	started, rows int
	// found: a whole dump was read; line is its fourth line and n that
	// line's number in the input
	found        bool
	synd, vendor int
	line         string
	n            int
}

var (
	litMlx5       = []byte("mlx5: ")
	litMlx5ErrCQE = []byte(": got completion with error:")
)

// observe reads line number n of the paste.
func (d *mlx5Dump) observe(n int, line []byte) {
	if d.found {
		return
	}
	// the paste reader has taken the launcher's and the log's prefixes off:
	// libmlx5 starts its own line (PFX "mlx5: ")
	if bytes.HasPrefix(line, litMlx5) && bytes.Contains(line, litMlx5ErrCQE) {
		d.rows, d.started = 0, n
		return
	}
	if d.started == 0 {
		return
	}
	f := bytes.Fields(line)
	if len(f) != 4 || !hexWords(f) || n-d.started > 8 {
		d.started = 0 // not a dump line: the dump was cut
		return
	}
	d.rows++
	if d.rows < 4 {
		return
	}
	w, _ := strconv.ParseUint(string(f[1]), 16, 32)
	d.synd, d.vendor = int(w&0xff), int(w>>8&0xff)
	d.found, d.line, d.n = true, string(bytes.TrimSpace(line)), n
}

// hexWords: every field is a 32-bit word printed "%08x".
func hexWords(f [][]byte) bool {
	for _, w := range f {
		if len(w) != 8 {
			return false
		}
		for _, c := range w {
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// mlx5Syndromes are the syndromes mlx5_handle_error_cqe maps (rdma-core
// v64.0 providers/mlx5/cq.c), with the ibv_wc_status each gives, its
// number and ibv_wc_status_str's text (libibverbs/verbs.h, enum_strs.c),
// and the signature of that status where the catalogue has one. Flushed
// requests (0x05) and transport retries exceeded (0x15) are never dumped.
var mlx5Syndromes = map[int]struct {
	status string
	num    int
	text   string
	sig    string
}{
	0x01: {"IBV_WC_LOC_LEN_ERR", 1, "local length error", ""},
	0x02: {"IBV_WC_LOC_QP_OP_ERR", 2, "local QP operation error", ""},
	0x04: {"IBV_WC_LOC_PROT_ERR", 4, "local protection error", "ib-wc-local-protection"},
	0x06: {"IBV_WC_MW_BIND_ERR", 6, "memory management operation error", ""},
	0x10: {"IBV_WC_BAD_RESP_ERR", 7, "bad response error", ""},
	0x11: {"IBV_WC_LOC_ACCESS_ERR", 8, "local access error", ""},
	0x12: {"IBV_WC_REM_INV_REQ_ERR", 9, "remote invalid request error", "ib-wc-remote-invalid"},
	0x13: {"IBV_WC_REM_ACCESS_ERR", 10, "remote access error", "ib-wc-remote-access"},
	0x14: {"IBV_WC_REM_OP_ERR", 11, "remote operation error", "ib-wc-remote-op"},
	0x16: {"IBV_WC_RNR_RETRY_EXC_ERR", 13, "RNR retry counter exceeded", "ib-wc-rnr-retry"},
	0x22: {"IBV_WC_REM_ABORT_ERR", 16, "aborted error", ""},
}

// weightMlx5Syndrome ranks the decoded dump just above the dump's own
// signature (0.85), which it explains.
const weightMlx5Syndrome = 0.9

// mlx5Syndrome names the status of the error completion libmlx5 dumped,
// with what the status's signature says where there is one.
func (a *analysis) mlx5Syndrome(d mlx5Dump) {
	if !d.found {
		return
	}
	s, ok := mlx5Syndromes[d.synd]
	if !ok {
		s.status, s.num, s.text = "IBV_WC_GENERAL_ERR", 21, "general error"
	}
	msg := fmt.Sprintf("libmlx5's dump of the failed work completion holds syndrome 0x%02x (vendor syndrome 0x%02x): %s, %s (completion status %d)", d.synd, d.vendor, s.text, s.status, s.num)
	fix := "read the application's own completion line for the same status (NCCL's \"Got completion from peer\", perftest's \"Failed status\") and the peer's log"
	src := "https://github.com/linux-rdma/rdma-core/blob/v64.0/providers/mlx5/cq.c (dump_cqe: the completion as four lines of \"%08x %08x %08x %08x\"; mlx5_handle_error_cqe: syndrome to ibv_wc_status); providers/mlx5/mlx5dv.h (struct mlx5_err_cqe: vendor_err_synd, syndrome at bytes 54, 55; MLX5_CQE_SYNDROME_ values); libibverbs/verbs.h, libibverbs/enum_strs.c (ibv_wc_status and ibv_wc_status_str)"
	if sig := signatureByID(s.sig); sig != nil {
		msg += ": " + sig.Meaning(a.res.Platform)
		fix = sig.Fix
	}
	a.cause(weightMlx5Syndrome, report.Fail, "mlx5.cqe-syndrome", msg, fmt.Sprintf("line %d: %s", d.n, d.line), fix, src)
}

// signatureByID is the catalogue's signature of that id, nil when none.
func signatureByID(id string) *expect.Signature {
	if id == "" {
		return nil
	}
	sigs, err := expect.Signatures()
	if err != nil {
		return nil
	}
	for i := range sigs {
		if sigs[i].ID == id {
			return &sigs[i]
		}
	}
	return nil
}
