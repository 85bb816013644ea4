// Package triage says why a running NCCL job is stuck or slow, from what
// each node shows without touching the job: its NCCL processes and the
// libnccl each has mapped (path and GNU build ID), the job's state from
// NCCL's RAS service, GPU utilisation, power and clocks, sampled twice,
// and the tail of a log. It never signals or attaches to a process.
//
// Run is the command's pipeline; everything else here is pure: the sample
// script, parsers of its output and the rules that judge it. RAS answers
// are read by the one RAS parser, results.ParseRASAnswer.
package triage

import (
	"fmt"
	"time"
)

// RASPort is the port NCCL's RAS service answers clients on, on localhost
// (NCCL_RAS_ADDR changes it). Source: NVIDIA/nccl src/ras/ras_internal.h
// (NCCL_RAS_CLIENT_PORT 28028, the same from v2.24.3-1 to v2.30.7-1).
const RASPort = 28028

// RASProtocol is the client protocol version sparkrig speaks. Source:
// NVIDIA/nccl src/ras/ras_internal.h (NCCL_RAS_CLIENT_PROTOCOL 2, v2.24.3-1
// to v2.30.7-1).
const RASProtocol = 2

// MaxRASReply bounds what is kept of one RAS reply.
const MaxRASReply = 8 << 20

// CheckRASPort refuses a port no TCP service can listen on.
func CheckRASPort(p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("--ras-port %d is not a TCP port (1-65535)", p)
	}
	return nil
}

// RASDeadline is how long one RAS query may take on a node: shorter than
// the interval between samples (half of it), at least 2 s, at most 15 s. NCCL
// itself gives up on an unresponsive peer after 5 s (RAS_COLLECTIVE_LEG_
// TIMEOUT_SEC, src/ras/ras_internal.h:14 at v2.30.7-1); the TIMEOUT sent
// with each query (RASCollectiveTimeout) keeps its answer within ours.
func RASDeadline(interval time.Duration) time.Duration {
	d := 15 * time.Second
	if interval > 0 {
		d = min(d, interval/2)
	}
	return max(d, 2*time.Second).Round(time.Second)
}

// RASCollectiveTimeout is the TIMEOUT (whole seconds) sent to NCCL for a
// query bounded by deadline: NCCL waits that long for each leg of its
// gathering and as long again at most (RAS_COLLECTIVE_EXTRA_TIMEOUT_SEC,
// ras_internal.h:15), so a third of the deadline leaves it time to answer.
func RASCollectiveTimeout(deadline time.Duration) int {
	return max(1, int(deadline/time.Second)/3)
}

// The RAS client's exit codes in the sample script, and what each means.
const (
	rasExitRefused   = 7  // nothing listens on the port
	rasExitNotRAS    = 8  // something answered that is not NCCL's handshake
	rasExitRefusedOp = 9  // NCCL refused a command (SET FORMAT json before 2.28.7)
	rasExitTimeout   = 10 // no (complete) answer within the deadline
	rasExitClosed    = 11 // the listener closed the connection without a word
	exitTimeoutCmd   = 124
)

// rasProblem says in words what a RAS query's exit means ("" for success).
func rasProblem(a RASAnswer) string {
	switch a.Exit {
	case 0:
		return ""
	case rasExitRefused:
		return "nothing listens on the RAS port"
	case rasExitNotRAS:
		return "the listener on the RAS port is not NCCL's RAS service: it answered the handshake with " + quoteAnswer(a.Raw)
	case rasExitRefusedOp:
		return "NCCL's RAS service refused a command: " + quoteAnswer(a.Raw)
	case rasExitTimeout, exitTimeoutCmd:
		return "no answer from the RAS port within the deadline (a listener that accepts and never answers, or a stopped process)"
	case rasExitClosed:
		return "the listener on the RAS port closed the connection without answering the handshake"
	case -1:
		return "the RAS query did not finish (the sample was cut short)"
	}
	// ncclras says why on stderr, which the script keeps: "Unexpected
	// response from NCCL: ..." for a listener that is not NCCL's
	// (src/ras/client.cc:244 at v2.30.7-1)
	if len(a.Raw) > 0 {
		return fmt.Sprintf("%s exited with status %d: %s", a.Client, a.Exit, quoteAnswer(a.Raw))
	}
	return fmt.Sprintf("%s exited with status %d", a.Client, a.Exit)
}

func quoteAnswer(b []byte) string {
	s := string(b)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%q", s)
}
