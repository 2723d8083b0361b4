package snapshot

import "testing"

func TestTreeEncodingRoundTrip(t *testing.T) {
	es := []entry{
		{name: "a", mode: modeFile},
		{name: "a-b", mode: modeExec},
		{name: "a", mode: modeDir},
		{name: "link", mode: modeSymlink},
		{name: "mod", mode: modeGitlink},
	}
	es[0].hash[0], es[2].hash[1] = 1, 2
	// "a" (file) < "a-b" < "a/" (dir) in git order.
	sortEntries(es)
	if es[0].name != "a" || es[0].mode != modeFile || es[1].name != "a-b" || es[2].mode != modeDir {
		t.Fatalf("git order wrong: %+v", es)
	}
	got, err := decodeTree(encodeTree(es))
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		if got[i].name != es[i].name || got[i].mode != es[i].mode || got[i].hash != es[i].hash {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], es[i])
		}
	}
}

func FuzzDecodeTree(f *testing.F) {
	f.Add(encodeTree([]entry{{name: "x", mode: modeFile}}))
	f.Add([]byte("100644 a\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := decodeTree(data)
		if err != nil {
			return
		}
		var re []entry
		for _, e := range es {
			re = append(re, entry{name: e.name, mode: e.mode, hash: e.hash})
		}
		again, err := decodeTree(encodeTree(re))
		if err != nil || len(again) != len(es) {
			t.Fatalf("re-encoded tree decodes to %d entries, %v; want %d", len(again), err, len(es))
		}
		for i := range es {
			if again[i] != es[i] {
				t.Fatalf("entry %d: %+v != %+v", i, again[i], es[i])
			}
		}
	})
}
