package capped

import (
	"errors"
	"testing"
)

func TestBufferKeepsTheFirstBytes(t *testing.T) {
	quiet := &Buffer{Max: 4}
	if n, err := quiet.Write([]byte("abcdef")); n != 6 || err != nil || string(quiet.Bytes()) != "abcd" || quiet.Overflowed() {
		t.Errorf("quiet: %d %v %q %v", n, err, quiet.Bytes(), quiet.Overflowed())
	}
	errFull := errors.New("too much output")
	calls := 0
	loud := &Buffer{Max: 4, Err: errFull, OnFull: func() { calls++ }}
	loud.Write([]byte("ab"))
	if n, err := loud.Write([]byte("cdef")); n != 0 || err != errFull || string(loud.Bytes()) != "abcd" || !loud.Overflowed() {
		t.Errorf("loud: %d %v %q", n, err, loud.Bytes())
	}
	loud.Write([]byte("g"))
	if calls != 1 {
		t.Errorf("OnFull called %d times, want once", calls)
	}
}
