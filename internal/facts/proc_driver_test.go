package facts

import (
	"strings"
	"testing"

	sample "github.com/sparkrig/sparkrig/internal/fixture"
)

const h200DriverVersion = "../../testdata/gpu/proc-driver-nvidia-version.h200x2.txt"

func TestDriverVersionFromProc(t *testing.T) {
	if got := DriverVersionFromProc(sample.ReadVerbatim(t, h200DriverVersion)); got != "580.159.04" {
		t.Fatalf("DriverVersionFromProc = %q, want 580.159.04", got)
	}
	open := []byte("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  (dvs-builder@U16-I3-B04-4-1)  Thu Sep 25 2025\n")
	if got := DriverVersionFromProc(open); got != "580.95.05" {
		t.Fatalf("open module line gave %q", got)
	}
	if got := DriverVersionFromProc([]byte("no driver here\n")); got != "" {
		t.Fatalf("junk gave %q", got)
	}
}

func FuzzDriverVersionFromProc(f *testing.F) {
	f.Add(sample.ReadVerbatim(f, h200DriverVersion))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v := DriverVersionFromProc(b); strings.ContainsAny(v, " \n") {
			t.Fatalf("version %q", v)
		}
	})
}
