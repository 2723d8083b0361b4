// Package examples checks the deployment examples: the Kubernetes
// manifests and their Kustomize base (strictly decoded with the
// Kubernetes API types, and scored by kube-score where installed), the
// GitLab CI pipeline and the Argo Workflow. It holds tests only.
package examples

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsyaml "sigs.k8s.io/yaml"
)

// image is the release image the examples run, by version.
const image = "ghcr.io/seed43ef5acb/runner"

var versionedImage = regexp.MustCompile(`^` + regexp.QuoteMeta(image) + `:v\d+\.\d+\.\d+$`) //nolint:gochecknoglobals // a constant pattern

// documents splits a multi-document YAML file into its documents.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out, err := yaml.Marshal(&n) // anchors and aliases resolved by the JSON conversion below
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, out)
	}
}

// strict decodes one document into v, refusing unknown and duplicate fields.
func strict(t *testing.T, where string, doc []byte, v any) {
	t.Helper()
	if err := sigsyaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
}

// kustomization is the part of a Kustomization the base uses.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewTag  string `json:"newTag"`
		NewName string `json:"newName,omitempty"`
	} `json:"images"`
}

// k8sObjects are the decoded objects of examples/k8s.
type k8sObjects struct {
	jobs     map[string]*batchv1.Job
	policies []*networkingv1.NetworkPolicy
	claims   []*corev1.PersistentVolumeClaim
	tag      string // the Kustomization's image tag
	inBase   map[string]bool
}

func loadK8s(t *testing.T) k8sObjects {
	t.Helper()
	var k kustomization
	strict(t, "k8s/kustomization.yaml", documents(t, filepath.Join("k8s", "kustomization.yaml"))[0], &k)
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("kustomization.yaml: %s %s", k.APIVersion, k.Kind)
	}
	o := k8sObjects{jobs: map[string]*batchv1.Job{}, inBase: map[string]bool{}}
	for _, im := range k.Images {
		if im.Name == image {
			o.tag = im.NewTag
		}
	}
	if !versionedImage.MatchString(image + ":" + o.tag) {
		t.Errorf("kustomization.yaml sets %s to tag %q, want a release vX.Y.Z", image, o.tag)
	}
	for _, r := range k.Resources {
		o.inBase[r] = true
	}
	files, _ := filepath.Glob(filepath.Join("k8s", "*.yaml"))
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		for i, doc := range documents(t, f) {
			where := fmt.Sprintf("%s document %d", f, i+1)
			var meta struct{ Kind string }
			strict(t, where, doc, &struct {
				Kind       *string `json:"kind"`
				APIVersion any     `json:"apiVersion"`
				Metadata   any     `json:"metadata"`
				Spec       any     `json:"spec"`
			}{Kind: &meta.Kind})
			switch meta.Kind {
			case "Job":
				var j batchv1.Job
				strict(t, where, doc, &j)
				o.jobs[filepath.Base(f)] = &j
			case "NetworkPolicy":
				var p networkingv1.NetworkPolicy
				strict(t, where, doc, &p)
				o.policies = append(o.policies, &p)
			case "PersistentVolumeClaim":
				var c corev1.PersistentVolumeClaim
				strict(t, where, doc, &c)
				o.claims = append(o.claims, &c)
			default:
				t.Errorf("%s: kind %q is not checked here: add it", where, meta.Kind)
			}
		}
	}
	for r := range o.inBase {
		if _, err := os.Stat(filepath.Join("k8s", r)); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
	return o
}

// TestKubernetesExamples: the manifests decode strictly as Kubernetes
// objects and run the release image by version, as a non-root user with
// no privilege escalation, the runtime's seccomp and AppArmor profiles,
// requests and limits, a deadline and a TTL, behind a NetworkPolicy.
func TestKubernetesExamples(t *testing.T) {
	o := loadK8s(t)
	if len(o.jobs) != 2 || len(o.policies) != 1 || len(o.claims) != 1 {
		t.Fatalf("decoded %d Jobs, %d NetworkPolicies, %d claims; want 2, 1, 1", len(o.jobs), len(o.policies), len(o.claims))
	}
	if !o.inBase["batch-job.yaml"] || !o.inBase["networkpolicy.yaml"] {
		t.Errorf("the Kustomize base lacks the shard Job or the NetworkPolicy: %v", o.inBase)
	}
	uid := imageUID(t)
	for name, j := range o.jobs {
		if j.Spec.TTLSecondsAfterFinished == nil || j.Spec.ActiveDeadlineSeconds == nil {
			t.Errorf("%s: no ttlSecondsAfterFinished or activeDeadlineSeconds", name)
		}
		pod := j.Spec.Template.Spec
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Errorf("%s: the pod mounts a service account token it does not use", name)
		}
		checkPodSecurity(t, name, pod.SecurityContext, uid)
		selected := false
		for _, p := range o.policies {
			sel, err := metav1LabelSelector(p)
			if err != nil {
				t.Fatal(err)
			}
			selected = selected || sel.Matches(labels.Set(j.Spec.Template.Labels))
		}
		if !selected {
			t.Errorf("%s: no NetworkPolicy selects its pods (labels %v)", name, j.Spec.Template.Labels)
		}
		for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
			where := name + " container " + c.Name
			if c.Image != image+":"+o.tag {
				t.Errorf("%s: image %q, want %s:%s (kustomization.yaml)", where, c.Image, image, o.tag)
			}
			if c.ImagePullPolicy != corev1.PullAlways {
				t.Errorf("%s: imagePullPolicy %q, want Always", where, c.ImagePullPolicy)
			}
			checkContainerSecurity(t, where, c.SecurityContext)
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("%s: no %s request", where, r)
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					t.Errorf("%s: no %s limit", where, r)
				}
			}
		}
	}
	shard := o.jobs["batch-job.yaml"].Spec.Template.Spec.Containers[0]
	for _, dir := range []string{"/tmp", "/home/runner"} {
		if !slices.ContainsFunc(shard.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == dir }) {
			t.Errorf("the shard container mounts nothing writable at %s (the root file system is read-only)", dir)
		}
	}
	p := o.policies[0]
	if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || len(p.Spec.Ingress) != 0 ||
		!slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Errorf("NetworkPolicy %s: want all ingress refused and egress limited: %+v", p.Name, p.Spec)
	}
}

func metav1LabelSelector(p *networkingv1.NetworkPolicy) (labels.Selector, error) {
	return labels.ValidatedSelectorFromSet(p.Spec.PodSelector.MatchLabels)
}

// checkPodSecurity: non-root as the image's user, the runtime's seccomp
// and AppArmor profiles (never Unconfined).
func checkPodSecurity(t *testing.T, where string, sc *corev1.PodSecurityContext, uid int64) {
	t.Helper()
	switch {
	case sc == nil:
		t.Errorf("%s: no pod securityContext", where)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != uid:
		t.Errorf("%s: want runAsNonRoot and runAsUser %d (the image's user): %+v", where, uid, sc)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: seccompProfile %+v, want RuntimeDefault", where, sc.SeccompProfile)
	case sc.AppArmorProfile == nil || sc.AppArmorProfile.Type != corev1.AppArmorProfileTypeRuntimeDefault:
		t.Errorf("%s: appArmorProfile %+v, want RuntimeDefault", where, sc.AppArmorProfile)
	}
}

// checkContainerSecurity: no privilege escalation, no capabilities, a
// read-only root file system.
func checkContainerSecurity(t *testing.T, where string, sc *corev1.SecurityContext) {
	t.Helper()
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: securityContext %+v, want allowPrivilegeEscalation false, readOnlyRootFilesystem, drop ALL", where, sc)
	}
}

// imageUID is the uid of the Dockerfile's user (useradd --uid N), which
// the pods' runAsUser must match.
func imageUID(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`useradd [^\n]*--uid (\d+)`).FindSubmatch(data)
	u := regexp.MustCompile(`(?m)^USER (\d+):`).FindSubmatch(data)
	if m == nil || u == nil || string(m[1]) != string(u[1]) {
		t.Fatalf("Dockerfile: want useradd --uid N and USER N:N alike")
	}
	uid, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return uid
}

// kubeScoreExplained are the kube-score critical findings left on purpose,
// by check id, with the reason; there are none (kube-score v1.20.0).
var kubeScoreExplained = map[string]string{} //nolint:gochecknoglobals // a table

// TestKubeScore: kube-score finds nothing critical in the manifests that
// kubeScoreExplained does not explain, and every explanation is still used.
func TestKubeScore(t *testing.T) {
	bin := filepath.Join("..", ".ci", "bin", "kube-score")
	if _, err := os.Stat(bin); err != nil {
		p, err := exec.LookPath("kube-score")
		if err != nil {
			t.Skip("kube-score is not installed: `GOBIN=$PWD/.ci/bin go install github.com/zegl/kube-score/cmd/kube-score@v1.20.0` (bash .ci/run does this)")
		}
		bin = p
	}
	files := []string{filepath.Join("k8s", "batch-job.yaml"), filepath.Join("k8s", "merge-job.yaml"), filepath.Join("k8s", "networkpolicy.yaml")}
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"score", "--output-format", "json"}, files...)...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) { // exit 1: findings, read below
		t.Fatalf("kube-score: %v", err)
	}
	var objects []struct {
		ObjectName string `json:"object_name"`
		TypeMeta   struct{ Kind string }
		Checks     []struct {
			Check struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"check"`
			Grade    int  `json:"grade"`
			Skipped  bool `json:"skipped"`
			Comments []struct {
				Path, Summary, Description string
			} `json:"comments"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(out, &objects); err != nil {
		t.Fatalf("kube-score output: %v\n%s", err, out)
	}
	if len(objects) != 3 { // it does not score PersistentVolumeClaims
		t.Fatalf("kube-score scored %d objects, want the 2 Jobs and the NetworkPolicy", len(objects))
	}
	used := map[string]bool{}
	for _, o := range objects {
		for _, c := range o.Checks {
			if c.Skipped || c.Grade != 1 { // 1: critical
				continue
			}
			if _, ok := kubeScoreExplained[c.Check.ID]; ok {
				used[c.Check.ID] = true
				continue
			}
			t.Errorf("kube-score: %s %s: critical %s (%s): %+v", o.TypeMeta.Kind, o.ObjectName, c.Check.ID, c.Check.Name, c.Comments)
		}
	}
	for id := range kubeScoreExplained {
		if !used[id] {
			t.Errorf("kubeScoreExplained explains %s, which kube-score no longer reports: remove it", id)
		}
	}
}
