package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/browserop/browserop/intent"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

type openAPIDocument struct {
	OpenAPI    string                                `json:"openapi"`
	Info       map[string]any                        `json:"info"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas         map[string]schema `json:"schemas"`
		SecuritySchemes map[string]any    `json:"securitySchemes"`
	} `json:"components"`
	Security []map[string][]string `json:"security"`
}

type schema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

func loadOpenAPI(t *testing.T) openAPIDocument {
	t.Helper()
	var doc openAPIDocument
	dec := json.NewDecoder(bytes.NewReader(openAPIDoc))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("api/openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// The document is valid JSON with the required top-level keys, the file in
// the repository is what the API serves, and every route the mux serves is
// in it and every path in it is served (method and path).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	file, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, openAPIDoc) {
		t.Fatal("the embedded document differs from api/openapi.json")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(file, &top); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	for _, k := range []string{"openapi", "info", "paths", "components"} {
		if top[k] == nil {
			t.Fatalf("top-level key %q missing", k)
		}
	}
	doc := loadOpenAPI(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") || doc.Info["title"] == nil || doc.Info["version"] == nil {
		t.Fatalf("openapi %q info %v", doc.OpenAPI, doc.Info)
	}
	if doc.Components.SecuritySchemes["bearer"] == nil || len(doc.Security) == 0 {
		t.Fatal("no bearer security scheme")
	}

	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "post", "put", "patch", "delete", "head", "options", "trace":
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	s := newEnv(t, func(o *Options) { o.MCP = http.NotFoundHandler() }).s
	served := map[string]bool{}
	for _, rt := range routeTable(true) {
		served[rt.method+" "+rt.path] = true
	}
	for k := range served {
		if !documented[k] {
			t.Errorf("route %s is served but not in api/openapi.json", k)
		}
	}
	for k := range documented {
		if !served[k] {
			t.Errorf("api/openapi.json documents %s, which is not served", k)
		}
		// And the mux really routes it to that pattern.
		method, path, _ := strings.Cut(k, " ")
		r := httptest.NewRequest(method, strings.ReplaceAll(path, "{id}", "x1"), nil)
		if _, pat := s.mux.Handler(r); pat != k {
			t.Errorf("the mux routes %s to %q", k, pat)
		}
	}
	// Every documented operation says which errors it answers, and the
	// refusals every request can get.
	for k := range documented {
		method, path, _ := strings.Cut(k, " ")
		var op struct {
			Responses map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(doc.Paths[path][strings.ToLower(method)], &op); err != nil {
			t.Fatal(err)
		}
		for _, code := range []string{"401", "403", "404", "405", "421"} {
			if op.Responses[code] == nil {
				t.Errorf("%s: response %s not documented", k, code)
			}
		}
	}
}

// The schemas name exactly the JSON fields of the Go types the API reads
// and writes, so the document follows changes of tasks and ledger.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	doc := loadOpenAPI(t)
	types := map[string]any{
		"Contract":          ledger.Contract{},
		"CreateTaskRequest": tasks.CreateRequest{},
		"IntentRequest":     intent.Request{},
		"IntentMedia":       intent.Media{},
		"TaskState":         tasks.State{},
		"GrantState":        tasks.GrantState{},
		"ActionState":       tasks.ActionState{},
		"StopState":         tasks.StopState{},
		"HistoryEntry":      tasks.HistoryEntry{},
		"TaskList":          TaskList{},
		"RunList":           RunList{},
		"RunState":          tasks.RunState{},
		"RunSkip":           tasks.RunSkip{},
		"CancelRequest":     CancelRequest{},
		"FinishRequest":     FinishRequest{},
		"TaskResult":        tasks.Result{},
		"IntentOutcome":     tasks.IntentOutcome{},
		"GrantRequest":      GrantRequest{},
		"CleanupRequest":    CleanupRequest{},
		"CleanupSetting":    ledger.CleanupSetting{},
		"ConfirmRequest":    ConfirmRequest{},
		"ResolveRequest":    ResolveRequest{},
		"Error":             ErrorBody{},
		"Continuity":        ledger.Continuity{},
		"Provider":          ledger.Provider{},
		"ObserveMode":       ledger.ObserveMode{},
		"Limits":            ledger.Limits{},
		"Skill":             ledger.Skill{},
		"TabState":          tasks.TabState{},
	}
	for name, v := range types {
		sc, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("schema %s missing", name)
			continue
		}
		var fields []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			tag := rt.Field(i).Tag.Get("json")
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" || !rt.Field(i).IsExported() {
				continue
			}
			if n == "" {
				n = rt.Field(i).Name
			}
			fields = append(fields, n)
		}
		var props []string
		for p := range sc.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("schema %s has properties %v; the Go type %T has fields %v", name, props, v, fields)
		}
		for _, r := range sc.Required {
			if !slices.Contains(props, r) {
				t.Errorf("schema %s requires unknown property %q", name, r)
			}
		}
	}
}

// GET /v1/openapi.json serves the document.
func TestOpenAPIServed(t *testing.T) {
	e := newEnv(t).start()
	r := e.do(req{method: "GET", path: "/v1/openapi.json", token: e.agent})
	want(t, r, http.StatusOK, "")
	if !bytes.Equal(r.body, openAPIDoc) {
		t.Fatal("served document differs")
	}
	if !bytes.Equal(OpenAPI(), openAPIDoc) {
		t.Fatal("OpenAPI() differs")
	}
}
