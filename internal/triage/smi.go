package triage

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"
)

// GPUQuery is the nvidia-smi query each sample runs (CSV with its header,
// so columns are found by name).
const GPUQuery = "nvidia-smi --query-gpu=index,uuid,name,utilization.gpu,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv"

// AppsQuery lists the processes using each GPU.
const AppsQuery = "nvidia-smi --query-compute-apps=pid,gpu_uuid,process_name,used_memory --format=csv"

// GPU is one GPU in one sample. A value nvidia-smi did not give is -1.
type GPU struct {
	Index      int
	UUID, Name string
	Util       float64 // %
	Power      float64 // W
	PowerLimit float64 // W
	SMClock    float64 // MHz
	MemClock   float64 // MHz
}

// ParseGPUs reads the CSV nvidia-smi writes for GPUQuery (or any query
// holding some of its columns), finding columns by their header names.
func ParseGPUs(b []byte) ([]GPU, error) {
	rows, err := readCSV(b)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("nvidia-smi: no header")
	}
	col := columns(rows[0])
	var out []GPU
	for _, r := range rows[1:] {
		get := func(names ...string) string {
			for _, n := range names {
				if i, ok := col[n]; ok && i < len(r) {
					return strings.TrimSpace(r[i])
				}
			}
			return ""
		}
		g := GPU{Index: int(num(get("index"))), UUID: get("uuid"), Name: get("name"), Util: num(get("utilization.gpu")),
			Power: num(get("power.draw")), PowerLimit: num(get("power.limit", "enforced.power.limit")),
			SMClock: num(get("clocks.current.sm", "clocks.sm")), MemClock: num(get("clocks.current.memory", "clocks.mem"))}
		out = append(out, g)
	}
	return out, nil
}

// App is one process nvidia-smi lists on a GPU.
type App struct {
	PID  int
	GPU  string // UUID, when asked for
	Name string
}

// ParseApps reads the CSV of AppsQuery.
func ParseApps(b []byte) ([]App, error) {
	rows, err := readCSV(b)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	col := columns(rows[0])
	var out []App
	for _, r := range rows[1:] {
		a := App{PID: -1}
		if i, ok := col["pid"]; ok && i < len(r) {
			a.PID = int(num(r[i]))
		}
		if i, ok := col["gpu_uuid"]; ok && i < len(r) {
			a.GPU = strings.TrimSpace(r[i])
		}
		if i, ok := col["process_name"]; ok && i < len(r) {
			a.Name = strings.TrimSpace(r[i])
		}
		out = append(out, a)
	}
	return out, nil
}

func readCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(strings.NewReader(string(b)))
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, rec)
	}
}

// columns maps header names without their unit ("power.draw [W]") to
// their index.
func columns(h []string) map[string]int {
	m := map[string]int{}
	for i, c := range h {
		c = strings.TrimSpace(c)
		if j := strings.Index(c, " ["); j >= 0 {
			c = c[:j]
		}
		m[c] = i
	}
	return m
}

// num reads "100 %", "121.48 W", "1980 MHz"; -1 for "[N/A]" and the like.
func num(s string) float64 {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[:i]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return -1
	}
	return v
}
