package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sparkrig/sparkrig/internal/render"
)

// An exporter audit carries the bench and qualify documents --results
// names, re-read each time; one that cannot be read is named on stderr and
// makes the verdict unknown, and the audit goes on.
func TestExporterAuditAddsResults(t *testing.T) {
	var errb bytes.Buffer
	env := &Env{Now: time.Now, Stderr: &errb, Stdout: io.Discard, Getenv: func(string) string { return "" }}
	o := &exporterOptions{results: []string{"testdata/bench/h200x2-native.json", "testdata/bench/no-such.json"}}
	r, err := exporterAudit(context.Background(), env, o, "")
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := render.Prometheus(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`sparkrig_nccl_busbw_peak_bytes_per_second{input="20261122T033544Z-localhost",collective="all_gather",ranks="2"} 301816248161`,
		`sparkrig_nccl_busbw_peak_bytes_per_second{input="20261122T033544Z-localhost",collective="all_reduce",ranks="2"} 344208255579`,
		"sparkrig_status 3",
	} {
		if !strings.Contains(page.String(), line+"\n") {
			t.Errorf("no %q in the exporter's page", line)
		}
	}
	if got := errb.String(); got != "sparkrig: exporter: testdata/bench/no-such.json: open: no such file or directory\n" {
		t.Errorf("stderr %q", got)
	}
}
