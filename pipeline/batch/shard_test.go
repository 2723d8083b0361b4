package batch

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
)

// TestShardPartition is the property test: for any manifest size and
// shard count, the shards are disjoint, cover every position, keep
// manifest order and differ in size by at most one.
func TestShardPartition(t *testing.T) {
	t.Parallel()
	property := func(total16, count8 uint16) bool {
		total, count := int(total16%2000), int(count8%64)+1
		seen := make([]int, total)
		minLen, maxLen := total+1, -1
		for i := range count {
			idx := ShardIndices(total, Shard{Index: i, Count: count})
			for j, p := range idx {
				if p < 0 || p >= total || (j > 0 && idx[j-1] >= p) {
					return false
				}
				seen[p]++
			}
			minLen, maxLen = min(minLen, len(idx)), max(maxLen, len(idx))
		}
		for _, n := range seen {
			if n != 1 {
				return false
			}
		}
		return maxLen-minLen <= 1
	}
	cfg := &quick.Config{MaxCount: 500, Rand: nil}
	if err := quick.Check(property, cfg); err != nil {
		t.Error(err)
	}
	// The edge cases quick may not hit.
	for _, c := range [][2]int{{0, 1}, {0, 7}, {1, 1}, {5, 5}, {5, 6}, {64, 64}} {
		if !property(uint16(c[0]), uint16(c[1]-1)) {
			t.Errorf("partition fails for total %d, count %d", c[0], c[1])
		}
	}
}

func TestShardDeterministic(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		total, count := r.IntN(500), r.IntN(20)+1
		s := Shard{Index: r.IntN(count), Count: count}
		a, b := ShardIndices(total, s), ShardIndices(total, s)
		if len(a) != len(b) {
			t.Fatalf("not deterministic for %d %v", total, s)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("not deterministic for %d %v", total, s)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Shard
		wantErr bool
	}{
		{"", Shard{}, false},
		{"0/1", Shard{0, 1}, false},
		{"3/4", Shard{3, 4}, false},
		{" 1 / 2 ", Shard{1, 2}, false},
		{"4/4", Shard{}, true},
		{"-1/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"1", Shard{}, true},
		{"a/b", Shard{}, true},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrBadShard) {
			t.Errorf("ParseShard(%q): %v is not ErrBadShard", tt.in, err)
		}
	}
}

func TestResolveShard(t *testing.T) {
	t.Parallel()
	k8s := func(i string) map[string]string { return map[string]string{"JOB_COMPLETION_INDEX": i} }
	gitlab := func(i, n string) map[string]string { return map[string]string{"CI_NODE_INDEX": i, "CI_NODE_TOTAL": n} }
	buildkite := func(i, n string) map[string]string {
		return map[string]string{"BUILDKITE_PARALLEL_JOB": i, "BUILDKITE_PARALLEL_JOB_COUNT": n}
	}
	tests := []struct {
		name    string
		flag    string
		shards  int
		env     map[string]string
		want    Shard
		wantErr string // a part of the error; "" for none
	}{
		{"nothing", "", 0, nil, Shard{}, ""},
		{"an index without --shards is not sharding", "", 0, k8s("3"), Shard{}, ""},
		{"GitLab without a flag is not sharding", "", 0, gitlab("2", "4"), Shard{}, ""},
		{"flag", "1/4", 0, nil, Shard{1, 4}, ""},
		{"flag wins", "1/4", 4, k8s("3"), Shard{1, 4}, ""},
		{"flag and shards disagree", "1/4", 3, nil, Shard{}, "disagree"},
		{"k8s", "", 4, k8s("3"), Shard{3, 4}, ""},
		{"k8s out of range", "", 4, k8s("4"), Shard{}, "JOB_COMPLETION_INDEX=4"},
		{"k8s not a number", "", 4, k8s("x"), Shard{}, `JOB_COMPLETION_INDEX "x"`},
		{"no index", "", 4, nil, Shard{}, "$CI_NODE_INDEX"},
		{"GitLab is 1-based", "", 4, gitlab("1", "4"), Shard{0, 4}, ""},
		{"GitLab last", "", 4, gitlab("4", "4"), Shard{3, 4}, ""},
		{"GitLab auto", "auto", 0, gitlab("3", "5"), Shard{2, 5}, ""},
		{"GitLab index 0 is out of range", "auto", 0, gitlab("0", "4"), Shard{}, "counts from 1"},
		{"GitLab total disagrees", "", 3, gitlab("1", "4"), Shard{}, "CI_NODE_TOTAL=4"},
		{"Buildkite", "", 3, buildkite("0", "3"), Shard{0, 3}, ""},
		{"Buildkite auto", "auto", 0, buildkite("2", "3"), Shard{2, 3}, ""},
		{"Buildkite count not a number", "auto", 0, buildkite("1", "three"), Shard{}, "BUILDKITE_PARALLEL_JOB_COUNT"},
		{"auto without an engine", "auto", 0, nil, Shard{}, "found no index"},
		{"auto in k8s needs --shards", "auto", 0, k8s("1"), Shard{}, "Kubernetes sets no count"},
		{"auto in k8s with --shards", "auto", 2, k8s("1"), Shard{1, 2}, ""},
		{"two engines agree", "", 4, map[string]string{"JOB_COMPLETION_INDEX": "1", "CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "4"}, Shard{1, 4}, ""},
		{"two engines differ", "", 4, map[string]string{"JOB_COMPLETION_INDEX": "1", "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4"}, Shard{}, "says shard 1/4 but $CI_NODE_INDEX/$CI_NODE_TOTAL says 0/4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveShard(tt.flag, tt.shards, func(k string) string { return tt.env[k] })
			if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("ResolveShard(%q, %d, %v) = %v, %v; want %v, error containing %q", tt.flag, tt.shards, tt.env, got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadShard) {
				t.Errorf("%v is not ErrBadShard", err)
			}
		})
	}
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", "", "a/b", "-1/2", "9999999999999999999/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := ParseShard(s)
		if err != nil {
			return
		}
		if sh.Validate() != nil {
			t.Fatalf("ParseShard(%q) = %v without error but invalid", s, sh)
		}
		if s != "" {
			if again, err := ParseShard(sh.String()); err != nil || again != sh {
				t.Fatalf("round trip of %v: %v %v", sh, again, err)
			}
		}
	})
}
