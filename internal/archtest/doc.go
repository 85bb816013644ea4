// Package archtest holds no code: its tests pin sparkrig's shape, the
// package graph (which stage may import which) and the thinness of the
// command-line face (no function in internal/cli over 60 lines besides its
// flag declarations).
package archtest
