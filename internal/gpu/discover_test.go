package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// touch creates an empty file (a stand-in library) at dir/name.
func touch(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFindOrder(t *testing.T) {
	root := t.TempDir()
	ldlp := filepath.Join(root, "ldlp")
	cuda := filepath.Join(root, "cuda-13.0")
	site := filepath.Join(root, "venv/lib/python3.12/site-packages")
	std := filepath.Join(root, "usr/lib/x86_64-linux-gnu")
	cached := filepath.Join(root, "cache")

	touch(t, filepath.Join(cuda, "lib64"), "libcudart.so.13")
	touch(t, filepath.Join(cuda, "lib64"), "libcublas.so.13")
	touch(t, filepath.Join(site, "nvidia/nccl/lib"), "libnccl.so.2")
	touch(t, std, "libnccl.so.2")
	touch(t, std, "libcuda.so.1")
	touch(t, ldlp, "libcublasLt.so.12")
	lt13 := touch(t, cached, "libcublasLt.so.13")

	in := SearchInput{
		LDLibraryPath: ldlp + "::" + filepath.Join(root, "missing"),
		CUDAHome:      cuda,
		SitePackages:  []string{site},
		LDCache:       map[string][]string{"libcublasLt.so.13": {lt13}},
		StandardDirs:  []string{std},
	}
	for _, tt := range []struct {
		lib  Library
		want string
	}{
		{LibCUDA, filepath.Join(std, "libcuda.so.1")},                     // only in a standard directory
		{LibCUDART, filepath.Join(cuda, "lib64", "libcudart.so.13")},      // CUDA_HOME
		{LibCUBLAS, filepath.Join(cuda, "lib64", "libcublas.so.13")},      // CUDA_HOME
		{LibNCCL, filepath.Join(site, "nvidia/nccl/lib", "libnccl.so.2")}, // the wheel beats the system copy
		{LibCUBLASLt, filepath.Join(ldlp, "libcublasLt.so.12")},           // LD_LIBRARY_PATH beats the cache
	} {
		got, err := in.Find(tt.lib)
		if err != nil {
			t.Errorf("Find(%s): %v", tt.lib.Key, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Find(%s) = %s, want %s", tt.lib.Key, got, tt.want)
		}
	}
}

func TestFindPrefersNewestNameInADirectory(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "libcudart.so.12")
	want := touch(t, dir, "libcudart.so.13")
	got, err := SearchInput{Explicit: []string{dir}}.Find(LibCUDART)
	if err != nil || got != want {
		t.Fatalf("Find = %q, %v; want %q", got, err, want)
	}
}

func TestFindCUDA13Wheel(t *testing.T) {
	site := t.TempDir()
	want := touch(t, filepath.Join(site, "nvidia/cu13/lib"), "libcublas.so.13")
	got, err := SearchInput{SitePackages: []string{site}}.Find(LibCUBLAS)
	if err != nil || got != want {
		t.Fatalf("Find = %q, %v; want %q", got, err, want)
	}
}

func TestFindIgnoresStaleCacheAndDirectories(t *testing.T) {
	root := t.TempDir()
	// A directory named like the library is not a library.
	if err := os.MkdirAll(filepath.Join(root, "libnccl.so.2"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := SearchInput{Explicit: []string{root}, LDCache: map[string][]string{"libnccl.so.2": {filepath.Join(root, "gone/libnccl.so.2")}}}
	_, err := in.Find(LibNCCL)
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Find: got %v, want NotFoundError", err)
	}
}

func TestNotFoundNamesEverythingSearched(t *testing.T) {
	in := SearchInput{
		Explicit: []string{"/opt/x"}, LDLibraryPath: "/a:/b", CUDAHome: "/usr/local/cuda-13.0",
		SitePackages: []string{"/venv/site-packages"}, StandardDirs: []string{"/usr/lib/x86_64-linux-gnu"},
	}
	_, err := in.Find(LibNCCL)
	want := "libnccl.so.2/libnccl.so not found; searched /opt/x, /a, /b, /usr/local/cuda-13.0/lib64, /usr/local/cuda-13.0/lib, " +
		"/usr/local/cuda-13.0/targets/" + cudaTarget() + "/lib, /venv/site-packages/nvidia/nccl/lib, /venv/site-packages/nvidia/cu13/lib, " +
		"ld.so.cache, /usr/lib/x86_64-linux-gnu"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
	if strings.Count(err.Error(), "\n") != 0 {
		t.Fatal("the message must be one line")
	}
}

func TestParseLDConfig(t *testing.T) {
	out := readVerbatim(t, "testdata/ldconfig-p.debian12-x86_64.txt")
	got := ParseLDConfig(out, "amd64")
	for name, want := range map[string][]string{
		"libc.so.6":   {"/lib/x86_64-linux-gnu/libc.so.6"},
		"libffi.so.8": {"/lib/x86_64-linux-gnu/libffi.so.8"},
	} {
		if diff := cmp.Diff(want, got[name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if len(ParseLDConfig(out, "arm64")) != 0 {
		t.Error("arm64 must keep no x86-64 entries")
	}
}

func FuzzParseLDConfig(f *testing.F) {
	f.Add(readVerbatimF(f, "testdata/ldconfig-p.debian12-x86_64.txt"))
	f.Add([]byte("\tlibx.so (libc6,AArch64) => /lib/aarch64-linux-gnu/libx.so\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, paths := range ParseLDConfig(b, "amd64") {
			if name == "" && len(paths) == 0 {
				t.Fatal("empty entry")
			}
		}
	})
}
