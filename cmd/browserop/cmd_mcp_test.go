package main

// Process-level tests of `browserop mcp`: the built binary serves the MCP
// tools over stdio to the Go SDK's client and to the official MCP
// Inspector's CLI.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/tasks"
)

// mcpInspectorVersion is the pinned MCP Inspector. Install it (CI does,
// when the test finds it missing) with:
//
//	npm install --prefix "$(go env GOCACHE)/../mcp-inspector" --no-audit --no-fund @modelcontextprotocol/inspector@2.12.0
//
// BROWSEROP_MCP_INSPECTOR_DIR overrides the directory.
const mcpInspectorVersion = "2.12.0"

// mcpGoTool is the go command of the toolchain running the tests, which
// go test puts first on PATH.
func mcpGoTool(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "no go tool")
	return goTool
}

// mcpBinary builds browserop into a test directory.
func mcpBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary: skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "browserop")
	cmd := exec.Command(mcpGoTool(t), "build", "-o", out, ".")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", b)
	return out
}

// mcpWorld is a directory with a config whose ledger and ceiling are the
// test's own, and the environment of a browserop process using it.
type mcpWorld struct {
	dir, cfg, ledger string
	env              []string
}

func newMCPWorld(t *testing.T) *mcpWorld {
	t.Helper()
	w := &mcpWorld{dir: t.TempDir()}
	w.ledger = filepath.Join(w.dir, "state", "ledger.db")
	w.cfg = filepath.Join(w.dir, "config.yaml")
	// The ceiling adds example.com to the demo adapter's 127.0.0.1: a task
	// on example.com proves the command applies authority.ceiling.
	cfg := fmt.Sprintf("ledger:\n  path: %q\nauthority:\n  ceiling: [\"127.0.0.1\", \"example.com\"]\nlog:\n  format: json\n", w.ledger)
	require.NoError(t, os.WriteFile(w.cfg, []byte(cfg), 0o600))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "BROWSEROP_") || strings.HasPrefix(k, "npm_config_") {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "HOME="+w.dir, "XDG_STATE_HOME="+filepath.Join(w.dir, "xdg-state"),
		"XDG_CONFIG_HOME="+filepath.Join(w.dir, "xdg-config"), "npm_config_update_notifier=false")
	return w
}

// TestMCPStdioCommand runs `browserop mcp` as a desktop client would: the
// Go SDK's client starts the process and speaks MCP over its stdin and
// stdout. The command opens the configured ledger, applies the configured
// ceiling and exits 0 when the client closes stdin.
func TestMCPStdioCommand(t *testing.T) {
	bin := mcpBinary(t)
	w := newMCPWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cmd := exec.Command(bin, "mcp", "--config", w.cfg)
	cmd.Env = w.env
	// A file, not a buffer: the process writes it while the test reads it.
	stderrFile, err := os.Create(filepath.Join(w.dir, "stderr"))
	require.NoError(t, err)
	defer stderrFile.Close()
	cmd.Stderr = stderrFile
	stderr := func() string { b, _ := os.ReadFile(stderrFile.Name()); return string(b) }
	client := mcp.NewClient(&mcp.Implementation{Name: "browserop-test", Version: "test"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr())
	require.Equal(t, "browserop", cs.InitializeResult().ServerInfo.Name)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	require.ElementsMatch(t, []string{"task_create", "task_state", "task_list", "task_submit", "task_cancel", "task_finish", "task_observe", "task_continuity"}, names)

	args := map[string]any{"idempotency_key": "stdio-1", "title": "from stdio",
		"contract": map[string]any{"domains": []string{"example.com"}, "capabilities": []string{"post"}}}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "task_create", Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var task tasks.State
	require.NoError(t, json.Unmarshal(raw, &task))
	require.Equal(t, "mcp", task.Source)

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "task_create", Arguments: map[string]any{"idempotency_key": "stdio-2",
		"contract": map[string]any{"domains": []string{"example.org"}, "capabilities": []string{"post"}}}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.True(t, strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "forbidden: "), "outside the ceiling")

	require.NoError(t, cs.Close(), "browserop mcp exits 0 when the client closes stdin; stderr: %s", stderr())

	// The task is in the configured ledger.
	db, err := ledger.Open(ctx, w.ledger, ledger.Options{MustExist: true})
	require.NoError(t, err)
	defer db.Close()
	got, err := db.GetTask(ctx, task.ID)
	require.NoError(t, err)
	require.Equal(t, "from stdio", got.Request.Title)
}

// mcpInspector returns the directory holding the pinned MCP Inspector, or
// skips the test: when node or npm is missing or the Inspector is not
// installed. Under CI it installs the Inspector instead, and fails on any
// error.
func mcpInspector(t *testing.T) string {
	t.Helper()
	ci := os.Getenv("CI") != ""
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			if ci {
				t.Fatalf("CI: %s is needed for the MCP Inspector test: %v", tool, err)
			}
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	dir := os.Getenv("BROWSEROP_MCP_INSPECTOR_DIR")
	if dir == "" {
		out, err := exec.Command(mcpGoTool(t), "env", "GOCACHE").Output()
		require.NoError(t, err)
		dir = filepath.Join(filepath.Dir(strings.TrimSpace(string(out))), "mcp-inspector")
	}
	installed := func() bool {
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "package.json"))
		var pkg struct{ Version string }
		return err == nil && json.Unmarshal(raw, &pkg) == nil && pkg.Version == mcpInspectorVersion
	}
	if installed() {
		return dir
	}
	install := []string{"install", "--prefix", dir, "--no-audit", "--no-fund", "@modelcontextprotocol/inspector@" + mcpInspectorVersion}
	if !ci {
		t.Skipf("the MCP Inspector %s is not installed in %s; install it with: npm %s", mcpInspectorVersion, dir, strings.Join(install, " "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", install...)
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm %s:\n%s", strings.Join(install, " "), out)
	require.True(t, installed(), "npm installed something other than inspector %s:\n%s", mcpInspectorVersion, out)
	return dir
}

// TestMCPInspectorCLI drives `browserop mcp` with the official MCP
// Inspector in CLI mode: it lists exactly the six tools, and a tools/call
// of task_create creates a task, the same one again on a second call with
// the same key (each call is a new browserop process on the same ledger).
func TestMCPInspectorCLI(t *testing.T) {
	dir := mcpInspector(t)
	bin := mcpBinary(t)
	w := newMCPWorld(t)
	// Four npx runs share the bound: on a loaded machine each takes tens
	// of seconds (one was killed at 60s after printing its answer).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// The Inspector's own options come first; after "--" is the server's
	// command line (the Inspector has a --config option of its own).
	inspect := func(opts ...string) []byte {
		t.Helper()
		args := append([]string{"--no", "--prefix", dir, "mcp-inspector", "--cli"}, opts...)
		args = append(args, "--", bin, "mcp", "--config", w.cfg)
		cmd := exec.CommandContext(ctx, "npx", args...)
		cmd.Env, cmd.Dir = w.env, w.dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "npx %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout.String(), stderr.String())
		return stdout.Bytes()
	}

	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Required []string `json:"required"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	out := inspect("--method", "tools/list")
	require.NoError(t, json.Unmarshal(out, &list), "%s", out)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Name == "task_create" {
			require.ElementsMatch(t, []string{"idempotency_key", "contract"}, tool.InputSchema.Required)
		}
	}
	require.ElementsMatch(t, []string{"task_create", "task_state", "task_list", "task_submit", "task_cancel", "task_finish", "task_observe", "task_continuity"}, names)

	type result struct {
		IsError           bool           `json:"isError"`
		Meta              map[string]any `json:"_meta"`
		StructuredContent tasks.State    `json:"structuredContent"`
	}
	create := func() result {
		out := inspect("--method", "tools/call", "--tool-name", "task_create",
			"--tool-arg", "idempotency_key=inspector-1", "title=from the inspector",
			`contract={"domains":["127.0.0.1"],"capabilities":["post","reply"]}`)
		var r result
		require.NoError(t, json.Unmarshal(out, &r), "%s", out)
		require.False(t, r.IsError, "%s", out)
		return r
	}
	first := create()
	require.NotEmpty(t, first.StructuredContent.ID)
	require.Equal(t, "mcp", first.StructuredContent.Source)
	require.Equal(t, "from the inspector", first.StructuredContent.Title)
	require.Equal(t, []string{"post", "reply"}, first.StructuredContent.Contract.Capabilities)
	require.Equal(t, true, first.Meta["browserop/created"])
	second := create()
	require.Equal(t, first.StructuredContent.ID, second.StructuredContent.ID, "same key and request: the same task")
	require.Equal(t, false, second.Meta["browserop/created"])

	out = inspect("--method", "tools/call", "--tool-name", "task_state", "--tool-arg", "task_id="+first.StructuredContent.ID)
	var state result
	require.NoError(t, json.Unmarshal(out, &state), "%s", out)
	require.Equal(t, ledger.TaskOpen, state.StructuredContent.Status)
}
