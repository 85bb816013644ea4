package cli

import (
	"os"
	"regexp"
	"testing"
)

// TestRootHelpNamesEveryCommand: the opening list of `sparkrig --help`
// names every command a user can run, each on a line of its own.
func TestRootHelpNamesEveryCommand(t *testing.T) {
	root := newRootCmd(&Env{Getenv: os.Getenv})
	n := 0
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		n++
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.Name()) + ` +\S`).MatchString(root.Long) {
			t.Errorf("sparkrig --help's opening list lacks %q", c.Name())
		}
	}
	if n < 11 {
		t.Errorf("%d commands, want the 11 sparkrig has at least", n)
	}
}
