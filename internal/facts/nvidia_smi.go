package facts

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// smiLog is the subset of `nvidia-smi -q -x` (nvsmi_device_v12.dtd and
// later) that sparkrig reads. Unsupported values read "N/A" or "[N/A]".
type smiLog struct {
	DriverVersion string   `xml:"driver_version"`
	CUDAVersion   string   `xml:"cuda_version"`
	GPUs          []smiGPU `xml:"gpu"`
}

type smiGPU struct {
	ID          string `xml:"id,attr"`
	ProductName string `xml:"product_name"`
	UUID        string `xml:"uuid"`
	MinorNumber string `xml:"minor_number"`
	Persistence string `xml:"persistence_mode"`
	MIG         struct {
		Current string `xml:"current_mig"`
	} `xml:"mig_mode"`
	FBMemory struct {
		Total string `xml:"total"`
	} `xml:"fb_memory_usage"`
	ECCMode struct {
		Current string `xml:"current_ecc"`
	} `xml:"ecc_mode"`
	ECCErrors struct {
		Volatile struct {
			DRAMUncorrectable string `xml:"dram_uncorrectable"`
			DoubleBit         struct {
				Total string `xml:"total"`
			} `xml:"double_bit"`
		} `xml:"volatile"`
	} `xml:"ecc_errors"`
	Remapped struct {
		Pending string `xml:"remapped_row_pending"`
		Failure string `xml:"remapped_row_failure"`
	} `xml:"remapped_rows"`
	// Driver 535 renamed clocks_throttle_reasons to clocks_event_reasons.
	EventReasons    smiReasons `xml:"clocks_event_reasons"`
	ThrottleReasons smiReasons `xml:"clocks_throttle_reasons"`
	PCI             struct {
		BusID string `xml:"pci_bus_id"`
	} `xml:"pci"`
	Processes struct {
		Items []struct{} `xml:"process_info"`
	} `xml:"processes"`
}

type smiReasons struct {
	Items []struct {
		XMLName xml.Name
		Value   string `xml:",chardata"`
	} `xml:",any"`
}

// active lists the reasons reported "Active", except idle, which is normal.
func (r smiReasons) active() []string {
	var out []string
	for _, it := range r.Items {
		name := it.XMLName.Local
		if strings.TrimSpace(it.Value) != "Active" || strings.HasSuffix(name, "gpu_idle") {
			continue
		}
		name = strings.TrimPrefix(name, "clocks_event_reason_")
		out = append(out, strings.TrimPrefix(name, "clocks_throttle_reason_"))
	}
	return out
}

// parseNvidiaSMIXML reads `nvidia-smi -q -x`.
func parseNvidiaSMIXML(b []byte) (GPUDriver, []GPU, error) {
	var l smiLog
	if err := xml.Unmarshal(b, &l); err != nil {
		return GPUDriver{}, nil, fmt.Errorf("nvidia-smi -q -x: %w", err)
	}
	drv := GPUDriver{Version: naToEmpty(l.DriverVersion), CUDAVersion: naToEmpty(l.CUDAVersion)}
	gpus := make([]GPU, 0, len(l.GPUs))
	for i, g := range l.GPUs {
		idx := i
		if n := atoiPtr(g.MinorNumber); n != nil {
			idx = *n
		}
		reasons := g.EventReasons.active()
		if len(g.EventReasons.Items) == 0 {
			reasons = g.ThrottleReasons.active()
		}
		unc := parseCount(g.ECCErrors.Volatile.DRAMUncorrectable)
		if unc == nil {
			unc = parseCount(g.ECCErrors.Volatile.DoubleBit.Total)
		}
		bus := g.PCI.BusID
		if bus == "" {
			bus = g.ID
		}
		gpus = append(gpus, GPU{
			Index:            idx,
			Name:             strings.TrimSpace(g.ProductName),
			UUID:             strings.TrimSpace(g.UUID),
			PCIBus:           NormalizePCIAddr(bus),
			Persistence:      naToEmpty(g.Persistence),
			MIGMode:          naToEmpty(g.MIG.Current),
			MemoryTotalMiB:   parseMiB(g.FBMemory.Total),
			ECCMode:          naToEmpty(g.ECCMode.Current),
			ECCUncorrectable: unc,
			RemapPending:     naToEmpty(g.Remapped.Pending),
			RemapFailure:     naToEmpty(g.Remapped.Failure),
			ThrottleReasons:  reasons,
			Processes:        len(g.Processes.Items),
		})
	}
	return drv, gpus, nil
}

// naToEmpty maps nvidia-smi's "N/A", "[N/A]" and "Not Supported" to "".
func naToEmpty(s string) string {
	s = strings.TrimSpace(s)
	switch s {
	case "N/A", "[N/A]", "Not Supported", "[Not Supported]":
		return ""
	}
	return s
}

func parseCount(s string) *uint64 {
	n, err := strconv.ParseUint(naToEmpty(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// parseMiB reads "81559 MiB"; nil for "N/A" or "[N/A]" (GB10 unified memory).
func parseMiB(s string) *uint64 {
	f := strings.Fields(naToEmpty(s))
	if len(f) != 2 || f[1] != "MiB" {
		return nil
	}
	return parseCount(f[0])
}

// NormalizePCIAddr turns nvidia-smi's "00000000:18:00.0", lspci's "18:00.0"
// and "0000000F:01:00.0" into the sysfs form "0000:18:00.0" (lower case).
func NormalizePCIAddr(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 2:
		return "0000:" + s
	case 3:
		d := strings.TrimLeft(parts[0], "0")
		for len(d) < 4 {
			d = "0" + d
		}
		return d + ":" + parts[1] + ":" + parts[2]
	}
	return s
}
