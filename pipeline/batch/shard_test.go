package batch

import (
	"errors"
	"math/rand/v2"
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
	tests := []struct {
		flag    string
		shards  int
		index   string
		want    Shard
		wantErr bool
	}{
		{"", 0, "", Shard{}, false},
		{"", 0, "3", Shard{}, false}, // an index without --shards is not sharding
		{"1/4", 0, "", Shard{1, 4}, false},
		{"1/4", 4, "3", Shard{1, 4}, false}, // --shard wins
		{"", 4, "3", Shard{3, 4}, false},
		{"1/4", 3, "", Shard{}, true},
		{"", 4, "", Shard{}, true},
		{"", 4, "4", Shard{}, true},
		{"", 4, "x", Shard{}, true},
	}
	for _, tt := range tests {
		got, err := ResolveShard(tt.flag, tt.shards, tt.index)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ResolveShard(%q, %d, %q) = %v, %v; want %v, error %v", tt.flag, tt.shards, tt.index, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrBadShard) {
			t.Errorf("%v is not ErrBadShard", err)
		}
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
