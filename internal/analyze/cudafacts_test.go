package analyze

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// observePlain is cudaFacts.observe as first written: the error's names
// searched before "Cuda failure".
func (c *cudaFacts) observePlain(line []byte) {
	if c.version == "" {
		if j := bytes.Index(line, litNCCLVersion); j >= 0 {
			c.version = leadingVersion(line[j+len(litNCCLVersion):])
		}
	}
	inv, nsup := bytes.Contains(line, litInvalidArg), bytes.Contains(line, litNotSupported)
	if !inv && !nsup {
		return
	}
	j := bytes.Index(line, litCudaFailure)
	if j < 0 {
		return
	}
	if nsup && len(c.notSupported) < maxCUDAFiles {
		f, n := sourceLineBefore(line[:j])
		if f != "" {
			f = fmt.Sprintf("%s:%d", f, n)
		}
		c.notSupported = append(c.notSupported, f)
	}
	if !inv {
		return
	}
	c.invalidArg++
	if len(c.files) < maxCUDAFiles {
		c.files = append(c.files, sourceFileBefore(line[:j]))
	}
}

// observe gathers what observePlain does over any sequence of lines built
// of the words both look for, in any order and any number.
func TestCUDAFactsObserveIsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 7))
	parts := []string{"Cuda failure ", "Cuda failure", "'invalid argument'", "invalid argument", "'operation not supported'",
		"NCCL version ", "2.18.1", "+cuda12.1", "transport.cc:154 NCCL WARN ", "init.cc:426 ", "h:1:2 [0] ", "NCCL WARN", " ", "x", "Cuda", "'operation"}
	hits := 0
	for range 300 {
		var fast, plain cudaFacts
		for range rng.IntN(40) {
			var line []byte
			for range rng.IntN(8) {
				line = append(line, parts[rng.IntN(len(parts))]...)
			}
			fast.observe(line)
			plain.observePlain(line)
		}
		if !reflect.DeepEqual(fast, plain) {
			t.Fatalf("observe %+v, observePlain %+v", fast, plain)
		}
		hits += plain.invalidArg + len(plain.notSupported)
	}
	if hits < 500 {
		t.Fatalf("%d failures read", hits)
	}
}

// namesHopper is bytes.Contains of "H100" or of "H200", over lines built
// of pieces of both names.
func TestNamesHopperIsContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 8))
	parts := []string{"H", "H1", "H2", "100", "200", "00", "0", "1", "GH200", "H10", " ", "x"}
	named := 0
	for range 5000 {
		var line []byte
		for range rng.IntN(10) {
			line = append(line, parts[rng.IntN(len(parts))]...)
		}
		want := bytes.Contains(line, []byte("H100")) || bytes.Contains(line, []byte("H200"))
		if got := namesHopper(line); got != want {
			t.Fatalf("namesHopper(%q) = %v, want %v", line, got, want)
		}
		if want {
			named++
		}
	}
	if named < 500 {
		t.Fatalf("%d lines named a Hopper GPU", named)
	}
}
