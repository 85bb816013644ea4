package facts

import (
	"os"
	"testing"

	"github.com/sparkrig/sparkrig/internal/snapshot"
)

func TestProfMany(t *testing.T) {
	p := os.Getenv("PROF_SNAP")
	if p == "" {
		t.Skip()
	}
	s, err := snapshot.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	n := FromSnapshot(s)
	t.Log(len(n.NetDevs))
}
