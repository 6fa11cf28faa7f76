package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/browserop/browserop/browser"
	"github.com/browserop/browserop/bundled"
	"github.com/browserop/browserop/config"
	"github.com/browserop/browserop/demosite"
	"github.com/browserop/browserop/errcode"
	"github.com/browserop/browserop/ledger"
	"github.com/browserop/browserop/operator"
	"github.com/browserop/browserop/sites"
)

// faultFlags collects repeated --fault name=value flags.
type faultFlags struct{ f demosite.Faults }

func (ff *faultFlags) String() string { return strings.Join(ff.f.Active(), ",") }

func (ff *faultFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok {
		value = "true"
	}
	return ff.f.Set(name, value)
}

func cmdDemosite(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("browserop demosite", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	addr := fs.String("addr", "127.0.0.1:8787", "address to listen on (loopback)")
	var faults faultFlags
	fs.Var(&faults, "fault", "turn on a fault switch, name=value (repeatable): "+strings.Join(demosite.FaultNames(), ", "))
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	srv := demosite.New(demosite.Options{Oracle: true, Faults: faults.f})
	base, err := srv.Start(*addr)
	if err != nil {
		return fmt.Errorf("demosite: %w", err)
	}
	defer srv.Close()
	fmt.Fprintf(e.stdout, "demosite listening on %s (accounts %s, password %q; oracle at %s/_oracle/effects)\n",
		base, strings.Join(demosite.Accounts(), ", "), demosite.Password, base)
	<-ctx.Done()
	return nil
}

// cmdDemo shows the main job end to end on the bundled demo site: a small
// calendar published through headless Chromium, then a second pass that
// publishes nothing twice.
func cmdDemo(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("browserop demo", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	keep := fs.String("keep", "", "keep the ledger, profile and calendar in this directory (default: a temporary one, removed)")
	execPath := fs.String("browser", "", "Chrome or Chromium to use (default: found on PATH)")
	jsonOut := fs.Bool("json", false, "print the summaries as JSON")
	var faults faultFlags
	fs.Var(&faults, "fault", "turn on a demosite fault switch, name=value (repeatable)")
	if _, err := parseChecked(fs, args, noArgs(fs)); err != nil {
		return err
	}
	e.json = *jsonOut
	start := time.Now()
	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "browserop-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	say := func(format string, args ...any) {
		if !e.json {
			fmt.Fprintf(e.stdout, format+"\n", args...)
		}
	}

	srv := demosite.New(demosite.Options{Oracle: true, Faults: faults.f})
	base, err := srv.Start("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: start demosite: %w", err)
	}
	defer srv.Close()
	say("demosite at %s", base)

	exe, err := browser.FindExecutable(*execPath)
	if err != nil {
		return fmt.Errorf("%w: %v (the README's `make demo` installs Chromium with scripts/setup.sh)", errcode.ErrConfig, err)
	}
	b, err := browser.Launch(ctx, browser.Config{ExecPath: exe, ProfileDir: filepath.Join(dir, "profile"), Headless: true,
		NoSandbox: os.Geteuid() == 0, ActionTimeout: 15 * time.Second})
	if err != nil {
		return fmt.Errorf("demo: launch the browser: %w", err)
	}
	if err := demoLogin(ctx, b, base, "alice"); err != nil {
		b.Close()
		return fmt.Errorf("demo: log in as alice: %w", err)
	}
	say("headless Chromium signed in to demosite as @alice (profile %s)", filepath.Join(dir, "profile"))

	// Something of bob's to reply to and like, and carol to follow.
	bobPost := srv.SeedPost("bob", "What should a browser operator never do twice?", time.Now().Add(-time.Hour))
	calDir := filepath.Join(dir, "calendar")
	if err := writeDemoCalendar(calDir, base, bobPost, time.Now().Add(-time.Second)); err != nil {
		b.Close()
		return err
	}
	say("calendar %s: a post, a thread of three, a reply, a like, a follow and a post with an image and its alt text, all due now", calDir)

	db, err := ledger.Open(ctx, filepath.Join(dir, "ledger.db"), ledger.Options{})
	if err != nil {
		b.Close()
		return err
	}
	defer db.Close()
	p, err := config.Default().Policy()
	if err != nil {
		b.Close()
		return err
	}
	shipped, err := sites.LoadFS(bundled.Sites, "sites")
	if err != nil {
		b.Close()
		return err
	}
	var demo *sites.Declarative
	for _, d := range shipped {
		if d.Name() == "demo" {
			demo, err = d.WithOrigins(base)
		}
	}
	if demo == nil || err != nil {
		b.Close()
		return fmt.Errorf("demo: the bundled demo adapter: %v", err)
	}
	// The demo's profile and ledger are its own, made for it and thrown
	// away: it chooses their cleanup preference itself, and says so.
	demoProfile := filepath.Join(dir, "profile")
	if _, err := db.SetCleanupPreference(ctx, demoProfile, ledger.CleanupSubmittedAndProbeBlockers, "demo"); err != nil {
		b.Close()
		return err
	}
	say("cleanup preference of the demo's own profile: %s (your own profile's is yours to choose: browserop config cleanup)", ledger.CleanupSubmittedAndProbeBlockers)
	quiet := config.Default()
	quiet.Log.Level = "warn"
	r := operator.NewRunner(db, []sites.Adapter{demo}, p, operator.Planner{},
		func(context.Context) (*browser.Browser, error) { return b, nil },
		operator.Config{CalendarDir: calDir, ActionTimeout: 15 * time.Second, Profile: demoProfile}, logger(quiet, e.stderr))
	defer r.Close()

	say("\nfirst pass:")
	first, err := r.Pass(ctx)
	if err != nil {
		return err
	}
	if err := printSummary(e, first); err != nil {
		return err
	}
	effects := len(srv.Effects())
	say("demosite committed %d effects", effects)

	say("\nsecond pass (the same calendar again):")
	second, err := r.Pass(ctx)
	if err != nil {
		return err
	}
	if err := printSummary(e, second); err != nil {
		return err
	}
	again := len(srv.Effects())
	say("demosite committed %d effects in the second pass: nothing was published twice", again-effects)
	say("\ndone in %s; ledger %s", time.Since(start).Round(100*time.Millisecond), filepath.Join(dir, "ledger.db"))

	verified := first.Counts["verified"]
	if first.Outcome != operator.OutcomeOK || verified != 8 || again != effects || len(second.Actions) != 0 {
		return fmt.Errorf("%w: expected 8 verified actions, and a second pass that revisits nothing and publishes nothing; got %d verified (%s), %d actions and %d new effects in the second pass",
			errDemo, verified, first.Outcome, len(second.Actions), again-effects)
	}
	if err := checkDemoImage(srv.Effects()); err != nil {
		return fmt.Errorf("%w: %v", errDemo, err)
	}
	return nil
}

// checkDemoImage finds the image post among the site's effects: one, with
// the image's bytes and type and its alt text, as the site stored them.
func checkDemoImage(effects []demosite.Effect) error {
	sum := sha256.Sum256(demoImage())
	var found []demosite.Effect
	for _, e := range effects {
		if len(e.Media) > 0 {
			found = append(found, e)
		}
	}
	switch {
	case len(found) != 1:
		return fmt.Errorf("the site has %d posts with images, want 1", len(found))
	case len(found[0].Media) != 1:
		return fmt.Errorf("the image post has %d images, want 1", len(found[0].Media))
	}
	m := found[0].Media[0]
	if m.SHA256 != hex.EncodeToString(sum[:]) || m.Type != "png" || m.Alt != demoImageAlt {
		return fmt.Errorf("the image post's image is %s %s with alt %q, not the demo's", m.Type, m.SHA256, m.Alt)
	}
	return nil
}

// demoLogin signs in to demosite in a tab browserop owns, then closes it.
func demoLogin(ctx context.Context, b *browser.Browser, base, handle string) error {
	tab, err := b.NewTab(ctx, "about:blank")
	if err != nil {
		return err
	}
	defer b.CloseTab(context.WithoutCancel(ctx), tab)
	if _, err := tab.Navigate(ctx, base+"/login"); err != nil {
		return err
	}
	if _, err := tab.Fill(ctx, "input#login-handle", handle); err != nil {
		return err
	}
	if _, err := tab.Fill(ctx, "input#login-password", demosite.Password); err != nil {
		return err
	}
	if _, err := tab.ClickOnceAndWait(ctx, "button#login-submit"); err != nil {
		return err
	}
	who, err := tab.Attr(ctx, "span#whoami", "data-handle")
	if err != nil {
		return err
	}
	if who != handle {
		return fmt.Errorf("signed in as %q, not %q", who, handle)
	}
	return nil
}

func writeDemoCalendar(dir, base string, bobPost int64, at time.Time) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ts := at.UTC().Format(time.RFC3339)
	cal := fmt.Sprintf(`# The demo's calendar: everything is due now.
entries:
  - id: hello
    site: demo
    actor: alice
    type: post
    at: %[1]s
    text: "Hello from browserop: reserved, done once, verified."
  - id: how-it-works
    site: demo
    actor: alice
    type: thread
    at: %[1]s
    parts:
      - "How browserop publishes, 1/3: every action is reserved under an idempotency key first."
      - "2/3: it is marked executing on disk before the one click, then verified on the live page."
      - "3/3: an uncertain outcome is reconciled by searching the site, never blindly retried."
  - id: answer-bob
    site: demo
    actor: alice
    type: reply
    at: %[1]s
    target: %[2]s/p/%[3]d
    text: "Publish the same post twice. Hence the ledger."
  - id: like-bob
    site: demo
    actor: alice
    type: like
    at: %[1]s
    target: %[2]s/p/%[3]d
  - id: follow-carol
    site: demo
    actor: alice
    type: follow
    at: %[1]s
    target: %[2]s/u/carol
  # An image post: the image is read from the media directory (by
  # default the calendar's own), and its bytes, type and alt text are part
  # of the post's idempotency key.
  - id: lifecycle-picture
    site: demo
    actor: alice
    type: post
    at: %[1]s
    text: "An action's life in browserop, as a picture."
    media:
      - file: %[4]s
        alt: %[5]q
`, ts, base, bobPost, demoImageName, demoImageAlt)
	if err := os.WriteFile(filepath.Join(dir, demoImageName), demoImage(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "demo.yaml"), []byte(cal), 0o600)
}

// The demo's image and the alt text that describes it.
const (
	demoImageName = "lifecycle.png"
	demoImageAlt  = "Three boxes in a row joined by arrows: green for reserved, amber for executing, blue for verified."
)

// demoImage draws what demoImageAlt says: three boxes, green, amber and
// blue, joined left to right by arrows, on white.
func demoImage() []byte {
	const w, h = 360, 120
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	boxes := []color.RGBA{{0x2e, 0x9d, 0x4f, 0xff}, {0xf2, 0xa9, 0x00, 0xff}, {0x1f, 0x6f, 0xd1, 0xff}}
	for i, c := range boxes {
		x := 20 + i*120
		draw.Draw(img, image.Rect(x, 30, x+80, 90), &image.Uniform{c}, image.Point{}, draw.Src)
		if i == len(boxes)-1 {
			continue
		}
		arrow := &image.Uniform{color.RGBA{0x33, 0x33, 0x33, 0xff}}
		draw.Draw(img, image.Rect(x+84, 58, x+114, 62), arrow, image.Point{}, draw.Src)
		for d := range 8 { // the arrowhead
			draw.Draw(img, image.Rect(x+106+d, 52+d, x+107+d, 68-d), arrow, image.Point{}, draw.Src)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // an in-memory RGBA image always encodes
	return b.Bytes()
}
