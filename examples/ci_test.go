package examples

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed43ef5acb/runner/pipeline/batch"
)

// gitlabJob is the part of a GitLab CI job the example uses; a key
// outside it fails the strict decode.
type gitlabJob struct {
	Stage    string `yaml:"stage"`
	Parallel int    `yaml:"parallel"`
	Timeout  string `yaml:"timeout"`
	Needs    []any  `yaml:"needs"`
	When     string `yaml:"when"`
	Script   []string
	Image    *struct {
		Name       string   `yaml:"name"`
		Entrypoint []string `yaml:"entrypoint"`
	} `yaml:"image"`
	Interruptible bool `yaml:"interruptible"`
	Artifacts     *struct {
		When     string   `yaml:"when"`
		Paths    []string `yaml:"paths"`
		ExpireIn string   `yaml:"expire_in"`
	} `yaml:"artifacts"`
}

// TestGitLabExample: the pipeline decodes strictly, runs the release
// image, and its parallel shard jobs, numbered from 1 by GitLab, cover
// every shard once through --shard auto; the merge reads every shard.
func TestGitLabExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("gitlab", ".gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]gitlabJob{}
	var stages []string
	var def gitlabJob
	for name, node := range top {
		var err error
		switch name {
		case "stages":
			err = node.Decode(&stages)
		case "default":
			err = decodeStrict(node, &def)
		default:
			var j gitlabJob
			err = decodeStrict(node, &j)
			jobs[name] = j
		}
		if err != nil {
			t.Fatalf(".gitlab-ci.yml %s: %v", name, err)
		}
	}
	if def.Image == nil || !versionedImage.MatchString(def.Image.Name) || !slices.Equal(def.Image.Entrypoint, []string{""}) {
		t.Errorf("default image %+v, want %s:vX.Y.Z with an empty entrypoint (GitLab runs the script itself)", def.Image, image)
	}
	for name, j := range jobs {
		if !slices.Contains(stages, j.Stage) {
			t.Errorf("job %s: stage %q is not one of %v", name, j.Stage, stages)
		}
	}
	shard, ok := jobs["shard"]
	if !ok || shard.Parallel < 2 {
		t.Fatalf("no shard job with parallel: N (jobs %v)", jobs)
	}
	run := strings.Join(shard.Script, "\n")
	if !strings.Contains(run, "--shard auto") || !strings.Contains(run, `--out "out/shard-$CI_NODE_INDEX"`) {
		t.Errorf("shard script %q: want --shard auto and an --out per node", run)
	}
	seen := map[int]bool{}
	for node := 1; node <= shard.Parallel; node++ {
		env := map[string]string{"CI_NODE_INDEX": fmt.Sprint(node), "CI_NODE_TOTAL": fmt.Sprint(shard.Parallel)}
		s, err := batch.ResolveShard(batch.ShardAuto, 0, func(k string) string { return env[k] })
		if err != nil || s.Count != shard.Parallel || seen[s.Index] {
			t.Errorf("node %d: shard %v, %v", node, s, err)
		}
		seen[s.Index] = true
	}
	if merge := strings.Join(jobs["merge"].Script, "\n"); !strings.Contains(merge, "batch merge out/shard-*") {
		t.Errorf("merge script %q does not merge every shard", merge)
	}
}

// decodeStrict decodes a YAML node, refusing keys that v lacks.
func decodeStrict(n yaml.Node, v any) error {
	out, err := yaml.Marshal(&n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// argoWorkflow is the part of an Argo Workflow the example uses, with the
// Kubernetes types for its pods; a key outside it fails the decode.
type argoWorkflow struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		GenerateName string `json:"generateName"`
	} `json:"metadata"`
	Spec struct {
		Entrypoint            string `json:"entrypoint"`
		ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds"`
		TTLStrategy           *struct {
			SecondsAfterCompletion *int32 `json:"secondsAfterCompletion"`
		} `json:"ttlStrategy"`
		PodMetadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"podMetadata"`
		AutomountServiceAccountToken *bool                      `json:"automountServiceAccountToken"`
		SecurityContext              *corev1.PodSecurityContext `json:"securityContext"`
		Volumes                      []corev1.Volume            `json:"volumes"`
		Templates                    []argoTemplate             `json:"templates"`
	} `json:"spec"`
}

type argoTemplate struct {
	Name   string `json:"name"`
	Inputs *struct {
		Parameters []struct {
			Name string `json:"name"`
		} `json:"parameters"`
	} `json:"inputs"`
	RetryStrategy *struct {
		Limit string `json:"limit"`
	} `json:"retryStrategy"`
	Steps [][]struct {
		Name      string `json:"name"`
		Template  string `json:"template"`
		Arguments *struct {
			Parameters []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"parameters"`
		} `json:"arguments"`
		WithSequence *struct {
			Count string `json:"count"`
		} `json:"withSequence"`
	} `json:"steps"`
	Container *corev1.Container `json:"container"`
}

// TestArgoExample: the Workflow decodes strictly, its pods are set up as
// the Kubernetes examples are, and its shard steps cover every shard once
// and the merge reads each.
func TestArgoExample(t *testing.T) {
	var wf argoWorkflow
	strict(t, "argo/batch-workflow.yaml", documents(t, filepath.Join("argo", "batch-workflow.yaml"))[0], &wf)
	if wf.APIVersion != "argoproj.io/v1alpha1" || wf.Kind != "Workflow" {
		t.Fatalf("%s %s", wf.APIVersion, wf.Kind)
	}
	if wf.Spec.ActiveDeadlineSeconds == nil || wf.Spec.TTLStrategy == nil || wf.Spec.TTLStrategy.SecondsAfterCompletion == nil {
		t.Errorf("no activeDeadlineSeconds or ttlStrategy")
	}
	if wf.Spec.PodMetadata.Labels["app.kubernetes.io/name"] != "runner" {
		t.Errorf("pod labels %v: the NetworkPolicy selects app.kubernetes.io/name=runner", wf.Spec.PodMetadata.Labels)
	}
	checkPodSecurity(t, "the Workflow", wf.Spec.SecurityContext, imageUID(t))
	templates := map[string]argoTemplate{}
	for _, tpl := range wf.Spec.Templates {
		templates[tpl.Name] = tpl
		if c := tpl.Container; c != nil {
			where := "template " + tpl.Name
			if !versionedImage.MatchString(c.Image) {
				t.Errorf("%s: image %q, want %s:vX.Y.Z", where, c.Image, image)
			}
			checkContainerSecurity(t, where, c.SecurityContext)
			if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
				t.Errorf("%s: no requests or limits", where)
			}
		}
	}
	entry := templates[wf.Spec.Entrypoint]
	if len(entry.Steps) != 2 || entry.Steps[0][0].WithSequence == nil {
		t.Fatalf("entrypoint %q: want shard steps over a sequence, then the merge", wf.Spec.Entrypoint)
	}
	n, err := strconv.Atoi(entry.Steps[0][0].WithSequence.Count)
	if err != nil || n < 2 {
		t.Fatalf("withSequence count %q: want a number of shards", entry.Steps[0][0].WithSequence.Count)
	}
	args := strings.Join(templates["shard"].Container.Args, " ")
	if want := fmt.Sprintf("--shard {{inputs.parameters.index}}/%d", n); !strings.Contains(args, want) {
		t.Errorf("shard args %q: want %q for a sequence of %d", args, want, n)
	}
	merge := templates[entry.Steps[1][0].Template].Container.Args
	var shards []string
	for _, a := range merge {
		if regexp.MustCompile(`^/data/out/shard-\d+$`).MatchString(a) {
			shards = append(shards, a)
		}
	}
	for i := range n {
		if !slices.Contains(shards, fmt.Sprintf("/data/out/shard-%d", i)) {
			t.Errorf("the merge does not read shard %d: %v", i, merge)
		}
	}
	if len(shards) != n {
		t.Errorf("the merge reads %d shard dirs, the sequence makes %d", len(shards), n)
	}
}
