package batchreport

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium driven over the DevTools protocol, with
// its proxy pointed at a loopback listener that records every request that
// reaches it, and every request the page starts recorded from the
// Network domain.
type browser struct {
	ctx     context.Context
	proxy   *recorder
	mu      sync.Mutex
	fetched []string // URLs of Network.requestWillBeSent
}

// recorder is a proxy that answers nothing and records request lines.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			r.mu.Lock()
			r.lines = append(r.lines, strings.TrimSpace(line))
			r.mu.Unlock()
			_, _ = c.Write([]byte("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"))
		}()
	}
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("headless Chromium is not installed (apt-get install -y chromium; .ci/run installs it): the HTML report is not checked in a browser")
	return ""
}

// newBrowser starts Chromium with the flags of a locked-down, offline
// headless run and a fresh profile.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path := chromiumPath(t)
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	rec := &recorder{}
	go rec.serve(l)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-component-update", true),
		// The browser's own background fetches (network time, component and
		// account checks) would reach the proxy too and hide the page's.
		chromedp.Flag("disable-features", "Translate,NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,"+
			"AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions"),
		chromedp.Flag("disable-domain-reliability", true), chromedp.Flag("no-pings", true),
		chromedp.Flag("google-base-url", "http://127.0.0.1:9"), chromedp.Flag("gaia-url", "http://127.0.0.1:9"),
		chromedp.Flag("lso-url", "http://127.0.0.1:9"), chromedp.Flag("component-updater", "url-source=http://127.0.0.1:9"),
		chromedp.ProxyServer("http://"+l.Addr().String()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	b := &browser{ctx: ctx, proxy: rec}
	// Listen starts the browser and its tab (with the Network domain on).
	err = chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.fetched = append(b.fetched, e.Request.URL)
			b.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("start chromium %s: %v", path, err)
	}
	return b
}

func (b *browser) requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.fetched...)
}

func fileURL(path string) string {
	abs, _ := filepath.Abs(path)
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

// screenshotDir is where the test leaves its screenshots: $RUNNER_SCREENSHOTS
// when set (CI can upload it), else a temporary dir.
func screenshotDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("RUNNER_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

type rect struct{ X, Y, W, H float64 }

// chartRects returns the page rectangles (CSS pixels) of the elements.
func (b *browser) chartRects(t *testing.T, ids []string) map[string]rect {
	t.Helper()
	js := `(function(ids){var o={};ids.forEach(function(id){var e=document.getElementById(id);if(!e)return;` +
		`var r=e.getBoundingClientRect();o[id]={X:r.left+scrollX,Y:r.top+scrollY,W:r.width,H:r.height}});return o})(` + jsArray(ids) + `)`
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]rect](js))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func jsArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// inked is the share of pixels in r that are not near-white, and how many
// distinct colours r has.
func inked(img image.Image, r rect) (float64, int) {
	x0, y0 := int(r.X), int(r.Y)
	x1, y1 := min(int(r.X+r.W), img.Bounds().Max.X), min(int(r.Y+r.H), img.Bounds().Max.Y)
	if x1 <= x0 || y1 <= y0 {
		return 0, 0
	}
	ink, total := 0, 0
	colours := map[color.RGBA]bool{}
	rgba, fast := img.(*image.RGBA)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			var c color.RGBA
			if fast {
				c = rgba.RGBAAt(x, y)
			} else {
				c = color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			}
			total++
			if int(c.R)+int(c.G)+int(c.B) < 3*235 {
				ink++
			}
			if len(colours) < 64 {
				colours[c] = true
			}
		}
	}
	return float64(ink) / float64(total), len(colours)
}

func TestInkedSeesBlank(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 50, 50))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	if share, n := inked(img, rect{0, 0, 50, 50}); share != 0 || n != 1 {
		t.Errorf("a white image: ink %.2f, %d colours", share, n)
	}
	img.Set(10, 10, color.RGBA{200, 0, 0, 255})
	if share, _ := inked(img, rect{0, 0, 50, 50}); share == 0 {
		t.Error("a red pixel was not seen")
	}
}

// screenshot takes a PNG of the page from its top down to height CSS
// pixels (the charts; a full page of 300 rows is slow to decode under the
// race detector), saves it and decodes it.
func (b *browser) screenshot(t *testing.T, name string, height float64) image.Image {
	t.Helper()
	yes := true
	shot, err := chromedp.Call(b.ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Format: cdppage.CaptureScreenshotFormatPng, CaptureBeyondViewport: &yes, FromSurface: &yes,
		Clip: &cdppage.Viewport{Width: 1280, Height: height, Scale: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	buf := shot.Data
	path := filepath.Join(screenshotDir(t), name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// checkCharts asserts that every chart is on the page and drawn: at least
// 1% of its pixels inked, in at least three colours.
func checkCharts(t *testing.T, img image.Image, rects map[string]rect, ids []string) {
	t.Helper()
	for _, id := range ids {
		r, ok := rects[id]
		if !ok || r.W < 100 || r.H < 30 {
			t.Errorf("chart %s: missing or too small: %+v", id, r)
			continue
		}
		share, colours := inked(img, r)
		if share < 0.01 || colours < 3 {
			t.Errorf("chart %s at %+v looks blank: %.1f%% inked, %d colours", id, r, share*100, colours)
		}
	}
}

// scripts turns JavaScript on or off for the next navigations.
func (b *browser) scripts(t *testing.T, on bool) {
	t.Helper()
	if _, err := chromedp.Call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		t.Fatal(err)
	}
}

// bottom is the lowest edge of the rectangles, plus a margin.
func bottom(rects map[string]rect) float64 {
	y := 100.0
	for _, r := range rects {
		y = max(y, r.Y+r.H+20)
	}
	return y
}
