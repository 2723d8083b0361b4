package hello

import "testing"

func TestGreeting(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"", "Hello, world!"},
		{"   ", "Hello, world!"},
		{"Ada", "Hello, Ada!"},
		{" Grace ", "Hello, Grace!"},
	}
	for _, tt := range tests {
		if got := Greeting(tt.name); got != tt.want {
			t.Errorf("Greeting(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
