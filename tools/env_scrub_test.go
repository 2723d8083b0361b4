package tools

import (
	"slices"
	"strings"
	"testing"
)

func TestScrubEnvAttacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kv   string
		kept bool
	}{
		{"CI_JOB_JWT=x", false},
		{"DOCKER_CREDS=x", false},
		{"SLACK_WEBHOOK_URL=https://hooks.example/x", false},
		{"AZURE_STORAGE_CONNECTION_STRING=x", false},
		{"MYSQL_PWD=x", false},
		{"DATABASE_URL=postgres://app:hunter2@db:5432/app", false},
		{"SOME_SETTING=-----BEGIN OPENSSH PRIVATE KEY-----\nabc", false},
		{"ID=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", false},
		{"G=AIzaSyA1234567890abcdefghijkl", false},
		{"CDPATH=/", false},
		{"SHELLOPTS=xtrace", false},
		{"BASHOPTS=expand_aliases", false},
		{"LD_PRELOAD=/tmp/x.so", false},
		{"PWD=/work", true},
		{"OLDPWD=/", true},
		{"HOME=/home/u", true},
		{"GOPROXY=https://proxy.golang.org", true},
		{"HTTP_PROXY=http://proxy:3128", true},
		{"REPO_URL=https://github.com/o/r", true},
	}
	for _, tt := range tests {
		t.Run(tt.kv, func(t *testing.T) {
			got := slices.Contains(scrubEnv([]string{tt.kv}, nil, false), tt.kv)
			if got != tt.kept {
				t.Errorf("kept %q = %v, want %v", tt.kv, got, tt.kept)
			}
		})
	}
}

func TestScrubEnvGitConfig(t *testing.T) {
	t.Parallel()
	env := scrubEnv([]string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Ann"}, nil, false)
	want := []string{"GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Ann",
		"GIT_CONFIG_KEY_1=safe.bareRepository", "GIT_CONFIG_VALUE_1=explicit", "GIT_CONFIG_COUNT=2"}
	for _, w := range want {
		if !slices.Contains(env, w) {
			t.Errorf("missing %s in %s", w, strings.Join(env, " "))
		}
	}
	if slices.Contains(env, "GIT_CONFIG_COUNT=1") {
		t.Errorf("old count kept: %v", env)
	}
}
