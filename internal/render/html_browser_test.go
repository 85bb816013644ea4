package render

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// A small Chrome DevTools Protocol client over --remote-debugging-pipe:
// Chromium reads NUL-terminated JSON messages on fd 3 and writes them on fd 4,
// so no WebSocket and no port is needed.

var screenshotPath = flag.String("screenshot", "", "also write the browser test's screenshot to this path")

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     *os.File
	msgs    chan cdpMsg
	id      int
	session string

	mu     sync.Mutex
	events []cdpMsg
}

// chromiumPath returns the browser to test with, or skips the test.
func chromiumPath(t *testing.T) string {
	for _, p := range []string{os.Getenv("SPARKRIG_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("chromium not found (/usr/bin/chromium; set SPARKRIG_CHROMIUM): skipping the browser test")
	return ""
}

func startBrowser(t *testing.T) *browser {
	path := chromiumPath(t)
	toR, toW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-default-apps", "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe",
		"--user-data-dir="+t.TempDir(), "about:blank")
	cmd.ExtraFiles = []*os.File{toR, fromW} // fd 3: Chromium reads; fd 4: Chromium writes
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	toR.Close()
	fromW.Close()
	b := &browser{t: t, cmd: cmd, out: toW, msgs: make(chan cdpMsg, 256)}
	go b.read(fromR)
	t.Cleanup(func() {
		b.out.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	})
	return b
}

func (b *browser) read(r *os.File) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			close(b.msgs)
			return
		}
		var m cdpMsg
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID == 0 {
			b.mu.Lock()
			b.events = append(b.events, m)
			b.mu.Unlock()
		}
		b.msgs <- m
	}
}

// call sends one command (to the attached page once there is one) and
// returns its result.
func (b *browser) call(method string, params any) json.RawMessage {
	b.t.Helper()
	b.id++
	m := map[string]any{"id": b.id, "method": method, "params": params}
	if b.session != "" && !strings.HasPrefix(method, "Target.") && !strings.HasPrefix(method, "Browser.") {
		m["sessionId"] = b.session
	}
	raw, _ := json.Marshal(m)
	if _, err := b.out.Write(append(raw, 0)); err != nil {
		b.t.Fatalf("cdp %s: %v", method, err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case r, ok := <-b.msgs:
			if !ok {
				b.t.Fatalf("cdp %s: browser went away", method)
			}
			if r.ID != b.id {
				continue
			}
			if r.Error != nil {
				b.t.Fatalf("cdp %s: %s", method, r.Error.Message)
			}
			return r.Result
		case <-deadline:
			b.t.Fatalf("cdp %s: no answer in 30s", method)
		}
	}
}

// waitEvent waits for an event of the attached page.
func (b *browser) waitEvent(method string) {
	b.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if b.seen(method) {
			return
		}
		select {
		case _, ok := <-b.msgs:
			if !ok {
				b.t.Fatalf("waiting for %s: browser went away", method)
			}
		case <-deadline:
			b.t.Fatalf("waiting for %s: timed out", method)
		}
	}
}

func (b *browser) seen(method string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.events {
		if e.Method == method {
			return true
		}
	}
	return false
}

// open attaches to a fresh page and loads url, recording console messages,
// exceptions and network requests from the start.
func (b *browser) open(url string, dark bool) {
	var target struct{ TargetID string }
	json.Unmarshal(b.call("Target.createTarget", map[string]any{"url": "about:blank"}), &target)
	var att struct{ SessionID string }
	json.Unmarshal(b.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}), &att)
	b.session = att.SessionID
	for _, d := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		b.call(d, map[string]any{})
	}
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false})
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	b.call("Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": scheme}}})
	b.mu.Lock()
	b.events = nil
	b.mu.Unlock()
	b.call("Page.navigate", map[string]any{"url": url})
	b.waitEvent("Page.loadEventFired")
}

// eval runs a page expression and decodes its JSON value into v.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	var res struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct{ Text string }
	}
	json.Unmarshal(b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}), &res)
	if res.ExceptionDetails != nil {
		b.t.Fatalf("eval %q: %s", expr, res.ExceptionDetails.Text)
	}
	if err := json.Unmarshal(res.Result.Value, v); err != nil {
		b.t.Fatalf("eval %q: %v (%s)", expr, err, res.Result.Value)
	}
}

// screenshot returns a PNG of the whole page at 1280 CSS pixels wide.
func (b *browser) screenshot() []byte {
	var lm struct {
		CSSContentSize struct{ Width, Height float64 } `json:"cssContentSize"`
	}
	json.Unmarshal(b.call("Page.getLayoutMetrics", map[string]any{}), &lm)
	var shot struct{ Data string }
	json.Unmarshal(b.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": 1280, "height": lm.CSSContentSize.Height, "scale": 1}}), &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	return png
}

// problems lists what a self-contained page must never cause: a request for
// anything but the page itself, a console error or warning, an uncaught
// exception, or a blocked load (CSP violations are logged as errors).
func (b *browser) problems(pageURL string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.events {
		switch e.Method {
		case "Network.requestWillBeSent":
			var p struct{ Request struct{ URL string } }
			json.Unmarshal(e.Params, &p)
			if p.Request.URL != pageURL {
				out = append(out, "network request: "+p.Request.URL)
			}
		case "Runtime.exceptionThrown":
			out = append(out, "exception: "+string(e.Params))
		case "Runtime.consoleAPICalled":
			var p struct{ Type string }
			json.Unmarshal(e.Params, &p)
			if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
				out = append(out, "console "+p.Type+": "+string(e.Params))
			}
		case "Log.entryAdded":
			var p struct {
				Entry struct{ Level, Text, URL string }
			}
			json.Unmarshal(e.Params, &p)
			if p.Entry.Level == "error" || p.Entry.Level == "warning" {
				out = append(out, fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
			}
		case "Network.loadingFailed":
			out = append(out, "loading failed: "+string(e.Params))
		}
	}
	return out
}
