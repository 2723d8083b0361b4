package spec

import "testing"

func TestSuggest(t *testing.T) {
	known := []string{"max_steps", "max_tokens", "timeout", "input_price_per_million"}
	tests := []struct{ word, want string }{
		{"max_step", "max_steps"},
		{"Timeout", "timeout"},
		{"timout", "timeout"},
		{"input_price", "input_price_per_million"},
		{"zzzzzzz", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.word, known); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
