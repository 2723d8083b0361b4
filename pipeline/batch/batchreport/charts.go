package batchreport

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed43ef5acb/runner/pipeline/batch"
	"github.com/seed43ef5acb/runner/runner/event"
)

// Chart geometry, in SVG user units (CSS pixels at 100%).
const (
	chartWidth  = 720
	labelWidth  = 200 // the label column of bar charts
	barArea     = 330 // the longest bar
	rowHeight   = 22
	distHeight  = 70 // the distribution strip under a top-ten chart
	distPoints  = 400
	trendHeight = 180
	// trendTop is the plot's top (100 %, the highest cost): below the
	// labels, so that a dot there never covers them
	trendTop   = 26
	trendPad   = 40
	diffBarMax = 80 // the longest diffstat bar in the table
)

// barChart is a horizontal bar chart; each bar may have a second segment
// (deletions after additions).
type barChart struct {
	ID     string
	Title  string
	Width  int
	Height int
	Bars   []bar
	Dist   *distribution // all repositories, sorted, when the chart is a top ten
}

type bar struct {
	Label, Value, Class, Class2 string
	Y, TextY, W, W2, ValueX     float64
}

// distribution is an area of every repository's value, largest first.
type distribution struct {
	Y      int // top of the strip
	Height int
	Path   string
	Note   string
}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// hbars lays out bars of values (v2 may be nil: one segment per bar).
func hbars(id, title string, labels, values []string, v1, v2 []float64, c1, c2 []string) *barChart {
	c := &barChart{ID: id, Title: title, Width: chartWidth, Height: len(labels)*rowHeight + 8}
	maxV := 0.0
	for i := range v1 {
		total := v1[i]
		if v2 != nil {
			total += v2[i]
		}
		maxV = math.Max(maxV, total)
	}
	for i, l := range labels {
		b := bar{Label: shorten(l, 26), Value: values[i], Class: c1[i], Y: float64(i*rowHeight + 4)}
		b.TextY = b.Y + 14
		if maxV > 0 {
			b.W = math.Max(1, v1[i]/maxV*barArea)
			if v2 != nil {
				b.W2 = v2[i] / maxV * barArea
				b.Class2 = c2[i]
			}
		}
		b.ValueX = labelWidth + b.W + b.W2 + 6
		c.Bars = append(c.Bars, b)
	}
	return c
}

// withDistribution adds a strip of every value, sorted, largest first,
// sampled down to distPoints (each point the largest of its bucket).
func (c *barChart) withDistribution(values []float64, note string) *barChart {
	if len(values) == 0 {
		return c
	}
	sorted := append([]float64(nil), values...)
	sortDesc(sorted)
	n := min(len(sorted), distPoints)
	maxV := sorted[0]
	d := &distribution{Y: c.Height + 10, Height: distHeight, Note: note}
	var p strings.Builder
	fmt.Fprintf(&p, "M%d,%d", labelWidth, d.Y+d.Height)
	width := float64(chartWidth - labelWidth - 20)
	for i := 0; i < n; i++ {
		lo, hi := i*len(sorted)/n, (i+1)*len(sorted)/n
		v := sorted[lo] // largest of the bucket: the slice is sorted
		if hi <= lo {
			continue
		}
		x := float64(labelWidth) + width*float64(i)/float64(max(n-1, 1))
		y := float64(d.Y + d.Height)
		if maxV > 0 {
			y -= v / maxV * float64(d.Height)
		}
		fmt.Fprintf(&p, "L%s,%s", f1(x), f1(y))
	}
	fmt.Fprintf(&p, "L%s,%dZ", f1(float64(labelWidth)+width), d.Y+d.Height)
	d.Path = p.String()
	c.Dist = d
	c.Height = d.Y + d.Height + 6
	return c
}

func sortDesc(v []float64) {
	slices.SortFunc(v, func(a, b float64) int { return cmp.Compare(b, a) })
}

// trendChart is success rate (0–100 %) and cost (0–max) per night.
type trendChart struct {
	Width, Height       int
	Rate, Cost          string // polyline points
	RateDots, CostDots  []dot
	FirstLabel          string
	LastLabel           string
	MaxCost             string
	Bottom, Right, Left int
	Top                 int // the plot's top: 100 % and the highest cost
}

type dot struct {
	X, Y  string
	Title string
}

func newTrend(nights []Night) *trendChart {
	if len(nights) < 2 {
		return nil
	}
	t := &trendChart{Width: chartWidth, Height: trendHeight, Left: trendPad, Right: chartWidth - trendPad, Bottom: trendHeight - 24, Top: trendTop}
	maxCost, unknown := 0.0, 0
	for _, n := range nights {
		maxCost = math.Max(maxCost, batch.KnownCost(n.Totals.CostUSD))
		if n.Totals.CostUSD == nil {
			unknown++
		}
	}
	switch {
	case unknown == len(nights):
		t.MaxCost = "unknown"
	case unknown > 0:
		t.MaxCost = fmt.Sprintf("%s (%d of %d nights unknown)", event.FormatCost(maxCost), unknown, len(nights))
	default:
		t.MaxCost = event.FormatCost(maxCost)
	}
	plotH := float64(t.Bottom - t.Top)
	var rate, cost []string
	for i, n := range nights {
		x := float64(t.Left) + float64(t.Right-t.Left)*float64(i)/float64(len(nights)-1)
		yr := float64(t.Bottom) - n.Totals.SuccessRate*plotH
		rate = append(rate, f1(x)+","+f1(yr))
		label := nightLabel(n)
		t.RateDots = append(t.RateDots, dot{X: f1(x), Y: f1(yr), Title: label + ": " + pct(n.Totals.SuccessRate) + " succeeded"})
		if n.Totals.CostUSD == nil { // an unknown cost has no point on the line
			continue
		}
		yc := float64(t.Bottom)
		if maxCost > 0 {
			yc -= *n.Totals.CostUSD / maxCost * plotH
		}
		cost = append(cost, f1(x)+","+f1(yc))
		t.CostDots = append(t.CostDots, dot{X: f1(x), Y: f1(yc), Title: label + ": " + totalCostText(n.Totals, "$")})
	}
	t.Rate, t.Cost = strings.Join(rate, " "), strings.Join(cost, " ")
	t.FirstLabel, t.LastLabel = nightLabel(nights[0]), nightLabel(nights[len(nights)-1])
	return t
}

func nightLabel(n Night) string {
	if n.FinishedAt.IsZero() {
		return shorten(n.Label, 40)
	}
	return n.FinishedAt.UTC().Format(time.DateOnly + " 15:04")
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
