package expect

import (
	"regexp"
	"strings"
	"testing"
)

func TestNCCLWarnCatalogue(t *testing.T) {
	c, err := NCCLWarns()
	if err != nil {
		t.Fatal(err)
	}
	// scripts/nccl-catalogue/catalogue.sh over v2.18.1-1 … v2.30.7-1 printed
	// 941 rows (848 distinct formats); those with under 4 literal bytes are
	// not kept for matching
	if c.Len() < 800 {
		t.Fatalf("%d formats", c.Len())
	}
	classes := map[string]int{}
	for _, w := range c.entries {
		classes[w.Class]++
		if w.First == "" || w.Last == "" || len(w.Versions) == 0 || !strings.HasPrefix(w.Where, "src/") {
			t.Errorf("%q: incomplete row %+v", w.Format, w)
		}
	}
	for _, cl := range NCCLWarnClasses {
		if classes[cl] == 0 {
			t.Errorf("class %s has no message", cl)
		}
	}
}

// Real WARN messages (the text after "NCCL WARN ") from the pastes in
// internal/analyze/testdata, with the format and class they come from.
func TestNCCLWarnMatch(t *testing.T) {
	c, err := NCCLWarns()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ msg, format, class string }{
		// pasted/20_wc_error4_local_protection.txt
		{"NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
			"NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d (%s)%s%s%s%s", "net-ib"},
		// pasted/09_sglang_socket_abort_traceback.txt
		{"socketStartConnect: Connect to 10.0.0.82<38455> failed : Software caused connection abort",
			"socketStartConnect: Connect to %s failed : %s", "socket-bootstrap"},
		// pasted/08_shm_segment_failed.txt
		{"Error: failed to extend /dev/shm/nccl-oA7T4J to 5967876 bytes", "Error: failed to extend %s to %ld bytes", "resource"},
		{"Error while creating shared memory segment /dev/shm/nccl-oA7T4J (size 5967872)", "Error while %s shared memory segment %s (size %ld)", "resource"},
		{"[Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6",
			"[Proxy Service %d] Failed to execute operation %s from rank %d, retcode %d", "proxy"},
		{"Cuda failure 'out of memory'", "Cuda failure '%s'", "cuda"},
		{"Call to ibv_create_cq failed with error Cannot allocate memory", "Call to %? failed with error %s", "net-ib"},
		{"NET/IB : mlx5_0:1 Got async event : local access violation work queue error", "NET/IB : %s:%d Got async event : %s", "net-ib"},
	} {
		w, ok := c.Match(tc.msg)
		if !ok {
			t.Errorf("%q: no format", tc.msg)
			continue
		}
		if w.Format != tc.format || w.Class != tc.class {
			t.Errorf("%q: %s %q, want %s %q", tc.msg, w.Class, w.Format, tc.class, tc.format)
		}
	}
	// pasted/18_broken_pipe_remote_crashed.txt: NCCL before 2.12 wrote "Net : …",
	// no release in the catalogue has it; the subsystem still tells its class
	old := "Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe"
	if w, ok := c.Match(old); ok {
		t.Errorf("%q matched %q", old, w.Format)
	}
	if got := NCCLWarnClassOf(old); got != "socket-bootstrap" {
		t.Errorf("class of %q = %q", old, got)
	}
}

// Every format, printed with sample values, is matched by itself or by a
// format at least as specific: the matcher is the format, not a guess.
func TestNCCLWarnMatchesEveryFormat(t *testing.T) {
	c, err := NCCLWarns()
	if err != nil {
		t.Fatal(err)
	}
	conv := regexp.MustCompile(`%[-+ #0-9.*hlLqjzt]*[a-zA-Z?]`)
	for i := range c.entries {
		w := &c.entries[i]
		msg := conv.ReplaceAllString(unescapeTSV(w.Format), "X7")
		msg = strings.ReplaceAll(msg, "%%", "%")
		got, ok := c.Match(msg)
		if !ok {
			t.Errorf("%q (printed %q): no match", w.Format, msg)
			continue
		}
		if got.literal < w.literal {
			t.Errorf("%q: matched the less specific %q", w.Format, got.Format)
		}
	}
}

// A WARN-heavy log calls Match once per line: it must stay linear however
// hostile the message (no backtracking).
func BenchmarkNCCLWarnMatch(b *testing.B) {
	c, err := NCCLWarns()
	if err != nil {
		b.Fatal(err)
	}
	msgs := []string{
		"NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
		"socketStartConnect: Connect to 10.0.0.82<38455> failed : Software caused connection abort",
		"Call to ibv_create_cq failed with error Cannot allocate memory",
		strings.Repeat("a%s ", 200),
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Match(msgs[i%len(msgs)])
	}
}
