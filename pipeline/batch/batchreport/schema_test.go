package batchreport

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/seed43ef5acb/runner/runner/event"
)

const reportSchemaFile = "../../../schema/batch-report.schema.json"

// TestReportSchemaMatchesJSON: schema/batch-report.schema.json (for the
// dashboards that read `--format json`) accepts the report's JSON, and its
// objects list exactly the fields of the Go types, required where the
// field has no omitempty.
func TestReportSchemaMatchesJSON(t *testing.T) {
	data, err := os.ReadFile(reportSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties map[string]any     `json:"properties"`
		Required   []string           `json:"required"`
		Defs       map[string]schemaO `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	checkFields(t, "report", schemaO{Properties: doc.Properties, Required: doc.Required}, reflect.TypeFor[Report]())
	for name, typ := range map[string]reflect.Type{
		"totals": reflect.TypeFor[Totals](), "tokens": reflect.TypeFor[event.Tokens](), "statusCount": reflect.TypeFor[StatusCount](),
		"errorGroup": reflect.TypeFor[ErrorGroup](), "repo": reflect.TypeFor[Repo](), "links": reflect.TypeFor[Links](), "night": reflect.TypeFor[Night](),
	} {
		checkFields(t, name, doc.Defs[name], typ)
	}

	sch, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("batch-report.schema.json", sch); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("batch-report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := loadTwoNights(t)
	rep.Problems = []string{"a problem"}
	out, err := Render(rep, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := compiled.Validate(v); err != nil {
		t.Errorf("the report's JSON does not match %s: %v", reportSchemaFile, err)
	}
}

type schemaO struct {
	Properties map[string]any `json:"properties"`
	Required   []string       `json:"required"`
}

func checkFields(t *testing.T, name string, s schemaO, typ reflect.Type) {
	t.Helper()
	var fields, required []string
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		key, opts, _ := strings.Cut(tag, ",")
		if key == "-" || !f.IsExported() {
			continue
		}
		fields = append(fields, key)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, key)
		}
	}
	var props []string
	for k := range s.Properties {
		props = append(props, k)
	}
	slices.Sort(fields)
	slices.Sort(required)
	slices.Sort(props)
	req := slices.Sorted(slices.Values(s.Required))
	if !slices.Equal(props, fields) {
		t.Errorf("%s: the schema has %v, %s has %v", name, props, typ, fields)
	}
	if !slices.Equal(req, required) {
		t.Errorf("%s: the schema requires %v, %s always writes %v", name, req, typ, required)
	}
}
