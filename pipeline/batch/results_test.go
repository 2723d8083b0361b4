package batch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadResultsTornAndCorrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    int
		wantErr bool
	}{
		{"empty", "", 0, false},
		{"two lines", `{"id":"a","status":"success"}` + "\n" + `{"id":"b","status":"skipped"}` + "\n", 2, false},
		{"torn last line", `{"id":"a","status":"success"}` + "\n" + `{"id":"b","sta`, 1, false},
		{"corrupt middle line", `{"id":"a"}` + "\n" + "garbage\n" + `{"id":"b"}` + "\n", 0, true},
		{"blank lines", "\n\n" + `{"id":"a"}` + "\n\n", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, ResultsFile), tt.content)
			got, err := ReadResults(dir)
			if (err != nil) != tt.wantErr || len(got) != tt.want {
				t.Fatalf("got %d results, err %v; want %d, error %v", len(got), err, tt.want, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			// Appending after a torn line starts a line of its own.
			log, err := openResultsLog(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := log.Append(RepoResult{ID: "z", Status: StatusNoChange}); err != nil {
				t.Fatal(err)
			}
			log.Close()
			again, err := ReadResults(dir)
			if err != nil || len(again) != tt.want+1 || again[len(again)-1].ID != "z" {
				t.Fatalf("after append: %d results, %v", len(again), err)
			}
		})
	}
	if rs, err := ReadResults(filepath.Join(t.TempDir(), "none")); err != nil || rs != nil {
		t.Errorf("missing dir: %v %v", rs, err)
	}
}

func FuzzReadResults(f *testing.F) {
	f.Add([]byte(`{"id":"a","status":"success"}` + "\n"))
	f.Add([]byte(`{"id":"a"}` + "\n" + `{"id":`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ResultsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		before, err := ReadResults(dir)
		if err != nil {
			return
		}
		log, err := openResultsLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		if err := log.Append(RepoResult{ID: "fuzz", Status: StatusSkipped}); err != nil {
			t.Fatal(err)
		}
		after, err := ReadResults(dir)
		if err != nil || len(after) != len(before)+1 {
			t.Fatalf("append after a readable file: %d → %d results, %v", len(before), len(after), err)
		}
	})
}
