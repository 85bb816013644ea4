package shell

import (
	"os/exec"
	"testing"
)

func TestQuoteRoundTripsThroughSh(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, w := range []string{"", "plain", "it's", "a b", "$(reboot)", "`id`", "x\ny", `back\slash`, "en$(x)p1", "100%"} {
		for _, q := range []string{Quote(w), QuoteIfNeeded(w)} {
			out, err := exec.Command(sh, "-c", "printf %s "+q).Output()
			if err != nil || string(out) != w {
				t.Errorf("sh -c 'printf %%s %s' = %q, %v; want %q", q, out, err, w)
			}
		}
	}
	if got := QuoteIfNeeded("NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1"); got != "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1" {
		t.Errorf("QuoteIfNeeded quoted a literal word: %s", got)
	}
}

func FuzzQuote(f *testing.F) {
	f.Add("it's $(x)")
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
			t.Fatalf("Quote(%q) = %s", s, q)
		}
	})
}
