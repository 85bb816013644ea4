package capture

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ncclLibGlobs are where libnccl.so.2 lives: the distribution's package,
// builds from source, CUDA trees and the pip wheel nvidia-nccl-cu1x (system
// and user site-packages). The same version string can name different
// builds in these places, so each is identified by its ELF build ID.
var ncclLibGlobs = []string{
	"/usr/lib/*-linux-gnu/libnccl.so.2",
	"/usr/local/lib/libnccl.so.2",
	"/usr/local/cuda*/lib*/libnccl.so.2",
	"/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2",
	"/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
	"$HOME/.local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
}

// ncclBuildIDScript prints, for every libnccl.so.2 found, a line
// "== PATH<TAB>RESOLVED" and then its build ID as `readelf -n` prints it
// ("    Build ID: HEX"), or, without binutils, as `file -L` does
// ("...BuildID[sha1]=HEX, ..."). ncclBuildIDs writes the same locally.
func ncclBuildIDScript() string {
	return `for f in ` + strings.Join(ncclLibGlobs, " ") + `; do
[ -e "$f" ] || continue
r=$(readlink -f "$f" 2>/dev/null || echo "$f")
printf '== %s\t%s\n' "$f" "$r"
if command -v readelf >/dev/null 2>&1; then readelf -n "$r" 2>&1 | grep 'Build ID'
elif command -v file >/dev/null 2>&1; then file -L "$r"
else echo "no readelf or file on this node"; fi
done`
}

// ncclBuildIDs is ncclBuildIDScript's output, read with debug/elf.
func ncclBuildIDs() []byte {
	var b bytes.Buffer
	home, _ := os.UserHomeDir()
	for _, g := range ncclLibGlobs {
		g = strings.Replace(g, "$HOME", home, 1)
		matches, _ := filepath.Glob(g)
		for _, f := range matches {
			r, err := filepath.EvalSymlinks(f)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "== %s\t%s\n", f, r)
			id, err := elfBuildID(r)
			if err != nil {
				fmt.Fprintf(&b, "readelf: %s: %v\n", r, err)
				continue
			}
			fmt.Fprintf(&b, "    Build ID: %s\n", id)
		}
	}
	return b.Bytes()
}

// elfBuildID returns the NT_GNU_BUILD_ID note of an ELF file, in hex,
// from its first ELFPrefix bytes: the one build-ID reader, the same
// triage applies to the bytes a node sends.
func elfBuildID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, ELFPrefix))
	if err != nil {
		return "", err
	}
	return BuildID(b)
}

// ELFPrefix is how much of a library's start is read for its build ID
// (triage has each node send it): the ELF
// header, the program headers and the note segment that holds the build ID
// sit in the first pages of a shared library.
const ELFPrefix = 16 << 10

// ntGNUBuildID is the note type of the GNU build ID (elf.h NT_GNU_BUILD_ID).
const ntGNUBuildID = 3

// BuildID returns the GNU build ID (hex) of an ELF file from its first
// bytes, read from the PT_NOTE segments the program headers name: two
// libnccl builds with one version string are told apart by it (pip's
// nvidia-nccl-cu13 2.28.9 and the DGX OS libnccl2 2.28.9 differ; see
// vllm-project/vllm #41725). Only what lies within b is read.
func BuildID(b []byte) (string, error) {
	if len(b) < 16 || !bytes.Equal(b[:4], []byte(elf.ELFMAG)) {
		return "", errors.New("not an ELF file")
	}
	var bo binary.ByteOrder
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return "", errors.New("ELF: unknown byte order")
	}
	type prog struct{ typ, off, size uint64 }
	var progs []prog
	switch elf.Class(b[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		if len(b) < 64 {
			return "", errors.New("ELF header cut short")
		}
		phoff, phentsize, phnum := bo.Uint64(b[32:]), uint64(bo.Uint16(b[54:])), uint64(bo.Uint16(b[56:]))
		for i := uint64(0); i < phnum; i++ {
			o := phoff + i*phentsize
			if phentsize < 56 || o+56 > uint64(len(b)) {
				break
			}
			progs = append(progs, prog{uint64(bo.Uint32(b[o:])), bo.Uint64(b[o+8:]), bo.Uint64(b[o+32:])})
		}
	case elf.ELFCLASS32:
		if len(b) < 52 {
			return "", errors.New("ELF header cut short")
		}
		phoff, phentsize, phnum := uint64(bo.Uint32(b[28:])), uint64(bo.Uint16(b[42:])), uint64(bo.Uint16(b[44:]))
		for i := uint64(0); i < phnum; i++ {
			o := phoff + i*phentsize
			if phentsize < 32 || o+32 > uint64(len(b)) {
				break
			}
			progs = append(progs, prog{uint64(bo.Uint32(b[o:])), uint64(bo.Uint32(b[o+4:])), uint64(bo.Uint32(b[o+16:]))})
		}
	default:
		return "", errors.New("ELF: unknown class")
	}
	for _, p := range progs {
		if elf.ProgType(p.typ) != elf.PT_NOTE || p.off >= uint64(len(b)) {
			continue
		}
		end := min(p.off+p.size, uint64(len(b)))
		if id, ok := gnuBuildID(b[p.off:end], bo); ok {
			return id, nil
		}
	}
	// Go's own linker keeps .note.gnu.build-id out of the PT_NOTE segment:
	// look for the note's header (name "GNU", type 3) in what was read
	for i := 0; i+16 <= len(b); i += 4 {
		if bo.Uint32(b[i:]) == 4 && bo.Uint32(b[i+8:]) == ntGNUBuildID && string(b[i+12:i+16]) == "GNU\x00" {
			if id, ok := gnuBuildID(b[i:], bo); ok {
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("no GNU build ID in the first %d bytes", len(b))
}

// gnuBuildID walks notes: namesz, descsz, type, then name and desc each
// padded to 4 bytes.
func gnuBuildID(n []byte, bo binary.ByteOrder) (string, bool) {
	for len(n) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(n)), uint64(bo.Uint32(n[4:])), bo.Uint32(n[8:])
		nameEnd := 12 + (namesz+3)&^3
		descEnd := nameEnd + (descsz+3)&^3
		if nameEnd > uint64(len(n)) || 12+namesz > uint64(len(n)) || nameEnd+descsz > uint64(len(n)) {
			return "", false
		}
		if typ == ntGNUBuildID && string(bytes.TrimRight(n[12:12+namesz], "\x00")) == "GNU" && descsz > 0 {
			return hex.EncodeToString(n[nameEnd : nameEnd+descsz]), true
		}
		if descEnd > uint64(len(n)) {
			return "", false
		}
		n = n[descEnd:]
	}
	return "", false
}
