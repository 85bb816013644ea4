package gpu

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Library names a shared library by the file names it goes by, best first.
type Library struct {
	Key   string   // short name: cuda, cudart, nccl, cublas, cublasLt
	Names []string // file names, newest ABI first
	// Wheel holds the site-packages sub-directories of NVIDIA's pip wheels that carry it.
	Wheel []string
}

// Libraries sparkrig loads. CUDA 13 wheels put every library in nvidia/cu13/lib;
// CUDA 12 wheels use one directory per component.
var (
	LibCUDA     = Library{Key: "cuda", Names: []string{"libcuda.so.1", "libcuda.so"}}
	LibCUDART   = Library{Key: "cudart", Names: []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so"}, Wheel: []string{"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}}
	LibNCCL     = Library{Key: "nccl", Names: []string{"libnccl.so.2", "libnccl.so"}, Wheel: []string{"nvidia/nccl/lib", "nvidia/cu13/lib"}}
	LibCUBLAS   = Library{Key: "cublas", Names: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, Wheel: []string{"nvidia/cu13/lib", "nvidia/cublas/lib"}}
	LibCUBLASLt = Library{Key: "cublasLt", Names: []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, Wheel: []string{"nvidia/cu13/lib", "nvidia/cublas/lib"}}
)

// SearchInput is everything discovery looks at, gathered by the caller so that
// Find itself only checks files.
type SearchInput struct {
	Explicit      []string            // directories named on the command line, searched first
	LDLibraryPath string              // $LD_LIBRARY_PATH
	CUDAHome      string              // $CUDA_HOME (or $CUDA_PATH)
	SitePackages  []string            // site-packages of a Python environment (--python)
	LDCache       map[string][]string // ldconfig -p: file name → paths
	StandardDirs  []string            // the loader's default directories
}

// StandardDirs returns the loader's usual directories for this architecture.
func StandardDirs() []string {
	triple := "x86_64-linux-gnu"
	if runtime.GOARCH == "arm64" {
		triple = "aarch64-linux-gnu"
	}
	return []string{
		"/usr/local/cuda/lib64", "/usr/local/cuda/targets/" + cudaTarget() + "/lib",
		"/usr/lib/" + triple, "/lib/" + triple, "/usr/lib/" + triple + "/nvidia",
		"/usr/lib64", "/usr/lib", "/lib64", "/lib",
	}
}

func cudaTarget() string {
	if runtime.GOARCH == "arm64" {
		return "sbsa-linux"
	}
	return "x86_64-linux"
}

// Dirs returns the directories searched for lib, in order: explicit
// directories, LD_LIBRARY_PATH, CUDA_HOME, the Python environment's wheels, then
// the loader's standard directories. The ld.so cache is consulted between the
// wheels and the standard directories.
func (in SearchInput) Dirs(lib Library) []string {
	var dirs []string
	dirs = append(dirs, in.Explicit...)
	for _, d := range strings.Split(in.LDLibraryPath, ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if in.CUDAHome != "" {
		dirs = append(dirs, filepath.Join(in.CUDAHome, "lib64"), filepath.Join(in.CUDAHome, "lib"),
			filepath.Join(in.CUDAHome, "targets", cudaTarget(), "lib"))
	}
	for _, sp := range in.SitePackages {
		for _, w := range lib.Wheel {
			dirs = append(dirs, filepath.Join(sp, w))
		}
	}
	return dedupe(dirs)
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// NotFoundError says which library is missing and everything that was searched.
type NotFoundError struct {
	Lib      Library
	Searched []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s not found; searched %s", strings.Join(e.Lib.Names, "/"), strings.Join(e.Searched, ", "))
}

// Find returns the path of lib: the first of its names present in a searched
// directory, then in the ld.so cache, then in the standard directories.
func (in SearchInput) Find(lib Library) (string, error) {
	dirs := in.Dirs(lib)
	for _, d := range dirs {
		if p, ok := firstIn(d, lib.Names); ok {
			return p, nil
		}
	}
	for _, n := range lib.Names {
		for _, p := range in.LDCache[n] {
			if isFile(p) {
				return p, nil
			}
		}
	}
	for _, d := range in.StandardDirs {
		if p, ok := firstIn(d, lib.Names); ok {
			return p, nil
		}
	}
	searched := append(append([]string{}, dirs...), "ld.so.cache")
	searched = append(searched, in.StandardDirs...)
	return "", &NotFoundError{Lib: lib, Searched: searched}
}

func firstIn(dir string, names []string) (string, bool) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if isFile(p) {
			return p, true
		}
	}
	return "", false
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// ParseLDConfig parses the output of `ldconfig -p` into file name → paths,
// keeping only entries for this machine's word size (x86-64 or AArch64).
//
//	libnccl.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnccl.so.2
func ParseLDConfig(out []byte, arch string) map[string][]string {
	m := map[string][]string{}
	want := map[string]string{"amd64": "x86-64", "arm64": "AArch64"}[arch]
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(line, " (")
		if !ok {
			continue
		}
		attrs, path, ok := strings.Cut(rest, ") => ")
		if !ok || (want != "" && !strings.Contains(attrs, want)) {
			continue
		}
		m[name] = append(m[name], strings.TrimSpace(path))
	}
	return m
}
