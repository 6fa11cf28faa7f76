package browser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// The DevTools relay: a Persistent Launch does not give Chrome a TCP port,
// which every local user can reach. It starts a relay process instead (this
// binary again, see relay_main.go) that starts Chrome with
// --remote-debugging-pipe, holds the pipe, and lets clients in through a
// unix socket in the 0700 profile directory (SocketFileName), only of the
// uid that runs it. The relay lives as long as Chrome: it exits when Chrome
// does, and Chrome exits when the relay's pipe closes.
//
// Several clients share the one pipe at a time (a pass, a login, a torture
// harness's person), so the relay multiplexes: it renumbers each client's
// command ids, routes each flattened session's messages to the client that
// attached it (a child that auto-attaches belongs to its parent's client),
// sends target discovery events to the clients that asked for them, and,
// when a client leaves, detaches its sessions. It never closes a target on
// its own.

// relayQueue bounds the messages that wait for one client: a client that
// reads nothing while Chrome keeps talking is dropped rather than letting
// the relay grow without bound or stall the other clients.
const relayQueue = 1 << 14

// wireMsg is one DevTools message, with the parts the relay routes by.
type wireMsg struct {
	ID        *int64          `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

func encodeMsg(m *wireMsg) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		// Every part is either a plain value or JSON that decoded.
		panic(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// relayClient is one connection to the relay.
type relayClient struct {
	out  chan []byte
	gone chan struct{}
	once sync.Once
	// discover: the client asked for target discovery events.
	discover bool
	// pageMode: a DevTools front-end on one page's WebSocket. It speaks
	// to its session (page) without naming it: the relay adds the id to
	// what it sends and takes it off what it receives, and it sees nothing
	// browser-wide.
	pageMode bool
	page     string
}

func (c *relayClient) leave() {
	c.once.Do(func() { close(c.gone) })
}

// pendingCall is a command sent to Chrome under a relay id.
type pendingCall struct {
	c      *relayClient // nil: the relay's own call
	id     int64        // the client's id
	method string
	target string // Target.attachToTarget: the target
	// attach: an attach command (to a target, or to the browser); evented
	// once its attachedToTarget event came.
	attach  bool
	evented bool
	done    chan *wireMsg
}

// relay is the multiplexer over one Chrome pipe.
type relay struct {
	// toChrome writes one message to Chrome (the pipe's framing included).
	toChrome func([]byte) error
	writeMu  sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]*pendingCall
	clients  map[*relayClient]bool
	sessions map[string]*relayClient
	// attaching lists, per target, the Target.attachToTarget commands
	// under way, in the order sent: the attachedToTarget event names the
	// target, not the command, and it comes before the answer.
	// Target.attachToBrowserTarget commands wait under "".
	attaching map[string][]*pendingCall
	// targets is the discovery state, from the relay's own
	// Target.setDiscoverTargets: a client that asks for discovery gets a
	// targetCreated for each, as Chrome would send it.
	targets map[string]json.RawMessage
	order   []string
	closed  bool
}

func newRelay(toChrome func([]byte) error) *relay {
	return &relay{
		toChrome:  toChrome,
		pending:   map[int64]*pendingCall{},
		clients:   map[*relayClient]bool{},
		sessions:  map[string]*relayClient{},
		attaching: map[string][]*pendingCall{},
		targets:   map[string]json.RawMessage{},
	}
}

func (r *relay) write(b []byte) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	return r.toChrome(b)
}

// join adds a client; pageMode as relayClient says.
func (r *relay) join(pageMode bool) (*relayClient, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("relay: Chrome is gone")
	}
	c := &relayClient{out: make(chan []byte, relayQueue), gone: make(chan struct{}), pageMode: pageMode}
	r.clients[c] = true
	return c, nil
}

// sendTo queues b for c; r.mu is held. A client whose queue is full is
// dropped.
func (r *relay) sendTo(c *relayClient, b []byte) {
	if c == nil || !r.clients[c] {
		return
	}
	select {
	case c.out <- b:
	default:
		r.dropLocked(c)
	}
}

// part removes a client: its sessions are detached (never closed), and
// answers to its commands still under way are dropped when they come.
func (r *relay) part(c *relayClient) {
	r.mu.Lock()
	r.dropLocked(c)
	r.mu.Unlock()
}

func (r *relay) dropLocked(c *relayClient) {
	if !r.clients[c] {
		return
	}
	delete(r.clients, c)
	c.leave()
	var detach []string
	for sid, owner := range r.sessions {
		if owner == c {
			delete(r.sessions, sid)
			detach = append(detach, sid)
		}
	}
	if len(detach) > 0 {
		// Detached from a goroutine of its own: r.mu is held here.
		go func() {
			for _, sid := range detach {
				_, _ = r.call("Target.detachFromTarget", map[string]string{"sessionId": sid}, "", false)
			}
		}()
	}
}

// unqueue takes p out of the attach queue of its target (an attach that
// failed has no event).
func (r *relay) unqueue(p *pendingCall) {
	cs := r.attaching[p.target]
	for i, x := range cs {
		if x == p {
			r.attaching[p.target] = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(r.attaching[p.target]) == 0 {
		delete(r.attaching, p.target)
	}
}

// call sends the relay's own command. With wait, it returns Chrome's
// answer (or the connection's end); without, it returns once sent.
func (r *relay) call(method string, params any, session string, wait bool) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errors.New("relay: Chrome is gone")
	}
	r.nextID++
	id := r.nextID
	p := &pendingCall{method: method}
	if wait {
		p.done = make(chan *wireMsg, 1)
	}
	r.pending[id] = p
	r.mu.Unlock()
	if err := r.write(encodeMsg(&wireMsg{ID: &id, Method: method, SessionID: session, Params: raw})); err != nil {
		return nil, err
	}
	if !wait {
		return nil, nil
	}
	m, ok := <-p.done
	if !ok || m == nil {
		return nil, errors.New("relay: Chrome is gone")
	}
	if len(m.Error) > 0 {
		return nil, fmt.Errorf("%s: %s", method, m.Error)
	}
	return m.Result, nil
}

// fromClient takes one message a client sent.
func (r *relay) fromClient(c *relayClient, b []byte) error {
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("relay: a message that is not JSON: %v", err)
	}
	if m.ID == nil || m.Method == "" {
		return errors.New("relay: a message without an id or a method")
	}
	if c.pageMode && m.SessionID == "" {
		m.SessionID = c.page
	}
	r.mu.Lock()
	if !r.clients[c] {
		r.mu.Unlock()
		return errors.New("relay: client gone")
	}
	if m.SessionID == "" && m.Method == "Target.setDiscoverTargets" {
		var p struct {
			Discover bool `json:"discover"`
		}
		_ = json.Unmarshal(m.Params, &p)
		c.discover = p.Discover
		r.sendTo(c, encodeMsg(&wireMsg{ID: m.ID, Result: json.RawMessage(`{}`)}))
		if p.Discover {
			for _, id := range r.order {
				r.sendTo(c, encodeMsg(&wireMsg{Method: "Target.targetCreated", Params: r.targets[id]}))
			}
		}
		r.mu.Unlock()
		return nil
	}
	r.nextID++
	id := r.nextID
	p := &pendingCall{c: c, id: *m.ID, method: m.Method}
	if m.SessionID == "" && (m.Method == "Target.attachToTarget" || m.Method == "Target.attachToBrowserTarget") {
		var a struct {
			TargetID string `json:"targetId"`
		}
		_ = json.Unmarshal(m.Params, &a)
		if m.Method == "Target.attachToBrowserTarget" {
			a.TargetID = ""
		}
		p.target, p.attach = a.TargetID, true
		r.attaching[a.TargetID] = append(r.attaching[a.TargetID], p)
	}
	r.pending[id] = p
	// Sent in the order registered: two attaches to one target are told
	// apart by that order alone.
	r.writeMu.Lock()
	r.mu.Unlock()
	defer r.writeMu.Unlock()
	m.ID = &id
	return r.toChrome(encodeMsg(&m))
}

// attachPage attaches a page-mode client to its target, for it.
func (r *relay) attachPage(c *relayClient, targetID string) error {
	raw, _ := json.Marshal(map[string]any{"targetId": targetID, "flatten": true})
	r.mu.Lock()
	if !r.clients[c] {
		r.mu.Unlock()
		return errors.New("relay: client gone")
	}
	r.nextID++
	id := r.nextID
	p := &pendingCall{c: c, method: "Target.attachToTarget", target: targetID, attach: true, done: make(chan *wireMsg, 1)}
	r.attaching[targetID] = append(r.attaching[targetID], p)
	r.pending[id] = p
	r.writeMu.Lock()
	r.mu.Unlock()
	err := r.toChrome(encodeMsg(&wireMsg{ID: &id, Method: "Target.attachToTarget", Params: raw}))
	r.writeMu.Unlock()
	if err != nil {
		return err
	}
	m, ok := <-p.done
	if !ok || m == nil {
		return errors.New("relay: Chrome is gone")
	}
	if len(m.Error) > 0 {
		return fmt.Errorf("attach: %s", m.Error)
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.SessionID == "" {
		return errors.New("attach: no session")
	}
	r.mu.Lock()
	c.page = res.SessionID
	r.mu.Unlock()
	return nil
}

// fromChrome takes one message Chrome sent.
func (r *relay) fromChrome(b []byte) {
	var m wireMsg
	if err := json.Unmarshal(b, &m); err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.ID != nil {
		r.answer(&m)
		return
	}
	switch m.Method {
	case "Target.targetCreated", "Target.targetInfoChanged", "Target.targetDestroyed", "Target.targetCrashed":
		if m.SessionID == "" {
			r.discovered(&m, b)
			return
		}
	case "Target.attachedToTarget":
		var p struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
			} `json:"targetInfo"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var owner *relayClient
		if m.SessionID != "" {
			owner = r.sessions[m.SessionID]
		} else {
			key := p.TargetInfo.TargetID
			if p.TargetInfo.Type == "browser" && len(r.attaching[""]) > 0 {
				key = ""
			}
			if cs := r.attaching[key]; len(cs) > 0 {
				cs[0].evented = true
				if r.clients[cs[0].c] {
					owner = cs[0].c
				}
				r.unqueue(cs[0])
			}
		}
		if owner == nil {
			// Nobody asked for it: let it go at once, so that it
			// never waits for a debugger that is not there.
			go func() {
				_, _ = r.call("Target.detachFromTarget", map[string]string{"sessionId": p.SessionID}, m.SessionID, false)
			}()
			return
		}
		r.sessions[p.SessionID] = owner
		r.deliver(owner, &m, b)
		return
	case "Target.detachedFromTarget", "Target.receivedMessageFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		owner := r.sessions[p.SessionID]
		if m.Method == "Target.detachedFromTarget" {
			delete(r.sessions, p.SessionID)
		}
		r.deliver(owner, &m, b)
		return
	}
	if m.SessionID != "" {
		r.deliver(r.sessions[m.SessionID], &m, b)
		return
	}
	// A browser-wide event nobody in particular asked for.
	for c := range r.clients {
		if !c.pageMode {
			r.sendTo(c, b)
		}
	}
}

// deliver sends a message of a session to its client, in that client's
// terms (a page-mode client does not see its own session's id).
func (r *relay) deliver(c *relayClient, m *wireMsg, raw []byte) {
	if c == nil {
		return
	}
	if c.pageMode {
		if m.SessionID == "" {
			return // browser-level: not the page's
		}
		if m.SessionID == c.page {
			mm := *m
			mm.SessionID = ""
			r.sendTo(c, encodeMsg(&mm))
			return
		}
	}
	r.sendTo(c, raw)
}

// answer routes Chrome's answer to a command.
func (r *relay) answer(m *wireMsg) {
	p := r.pending[*m.ID]
	if p == nil {
		return
	}
	delete(r.pending, *m.ID)
	if p.attach && !p.evented {
		// Its event came first and took it off the queue, unless the
		// attach failed.
		r.unqueue(p)
	}
	if p.c == nil || p.done != nil {
		if p.done != nil {
			p.done <- m
		}
		return
	}
	if p.method == "Target.attachToTarget" && len(m.Error) == 0 && !r.clients[p.c] {
		// Its client left meanwhile: nobody uses the session.
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Result, &res) == nil && res.SessionID != "" {
			delete(r.sessions, res.SessionID)
			go func() {
				_, _ = r.call("Target.detachFromTarget", map[string]string{"sessionId": res.SessionID}, "", false)
			}()
		}
		return
	}
	id := p.id
	mm := *m
	mm.ID = &id
	r.deliver(p.c, &mm, encodeMsg(&mm))
}

// discovered keeps the discovery state and passes the event on.
func (r *relay) discovered(m *wireMsg, raw []byte) {
	var p struct {
		TargetID   string `json:"targetId"`
		TargetInfo struct {
			TargetID string `json:"targetId"`
		} `json:"targetInfo"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		id := p.TargetInfo.TargetID
		if _, ok := r.targets[id]; !ok {
			r.order = append(r.order, id)
		}
		r.targets[id] = append(json.RawMessage(nil), m.Params...)
	case "Target.targetDestroyed":
		if _, ok := r.targets[p.TargetID]; ok {
			delete(r.targets, p.TargetID)
			for i, id := range r.order {
				if id == p.TargetID {
					r.order = append(r.order[:i:i], r.order[i+1:]...)
					break
				}
			}
		}
	}
	for c := range r.clients {
		if c.discover && !c.pageMode {
			r.sendTo(c, raw)
		}
	}
}

// end is Chrome's end: every client is let go, every call fails.
func (r *relay) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for c := range r.clients {
		delete(r.clients, c)
		c.leave()
	}
	for id, p := range r.pending {
		delete(r.pending, id)
		if p.done != nil {
			close(p.done)
		}
	}
}

// serveClient runs one client over its framing: read gives the next
// message it sent, send writes one to it. It returns when either side ends.
func (r *relay) serveClient(c *relayClient, read func() ([]byte, error), send func([]byte) error, hangup func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case b := <-c.out:
				if err := send(b); err != nil {
					r.part(c)
					hangup()
					return
				}
			case <-c.gone:
				hangup()
				return
			}
		}
	}()
	for {
		b, err := read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if err := r.fromClient(c, b); err != nil {
			break
		}
	}
	r.part(c)
	hangup()
	<-done
}

// writeFrame writes b and the 0 byte that ends a frame, without touching
// b: one message's bytes go to several clients at once.
func writeFrame(w io.Writer, b []byte) error {
	bufs := net.Buffers{b, frameEnd}
	_, err := bufs.WriteTo(w)
	return err
}

var frameEnd = []byte{0}

// readFrame reads one NUL-ended message of the pipe framing.
func readFrame(br interface{ ReadBytes(byte) ([]byte, error) }) ([]byte, error) {
	b, err := br.ReadBytes(0)
	if err != nil {
		if err == io.EOF && len(b) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b[:len(b)-1], nil
}
