package capture

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestHeadHeaderAsPattern: headHeader reads exactly the lines the pattern
// ^==> (.*) <==$ matches (the newline cut), with the same path, over
// lines built from the header's own pieces.
func TestHeadHeaderAsPattern(t *testing.T) {
	re := regexp.MustCompile(`^==> (.*) <==$`)
	pieces := []string{"==> ", " <==", "==>", "<==", " ", "/sys/class/net/enP2p1s0f1np1/mtu", "a", "\n", "\r", "\xff", ""}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := r.IntN(6); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		line := b.String()
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j+1] // addHeads hands it one line
		}
		got, ok := headHeader([]byte(line))
		m := re.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if ok != (m != nil) || ok && got != m[1] {
			t.Fatalf("%q: headHeader %q %v, pattern %q", line, got, ok, m)
		}
	}
}
