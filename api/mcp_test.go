package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browserop/browserop/mcptools"
)

// bearer adds a token to every request of an HTTP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// The real MCP server (mcptools) mounted at /mcp works for a client that
// sends the agent token, and refuses one without a token.
func TestRealMCPBehindChecks(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MCP = mcptools.HTTPHandler(mcptools.NewServer(o.Tasks, "test")) })
	e.start()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "api-test", Version: "test"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{e.agent, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect with the agent token: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "task_create") {
		t.Fatalf("tools %v", names)
	}
	// No tool reads or sets the person's cleanup preference: an agent
	// never chooses which of the person's tabs browserop closes.
	for _, tl := range tools.Tools {
		if n := strings.ToLower(tl.Name + " " + tl.Description); strings.Contains(n, "cleanup") || strings.Contains(n, "preference") {
			t.Fatalf("MCP tool %q touches the cleanup preference", tl.Name)
		}
	}
	_, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp"}, nil)
	if err == nil {
		t.Fatal("an MCP client without a token connected")
	}
}
