package verify_test

import (
	"testing"

	"github.com/browserop/browserop/verify"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"Empty", "", ""},
		{"Plain", "hello world", "hello world"},
		{"CRLF", "a\r\nb", "a\nb"},
		{"LoneCR", "a\rb", "a\nb"},
		{"CRCRLF", "a\r\r\nb", "a\n\nb"},
		{"TrailingSpacesPerLine", "a  \t\nb \u00a0", "a\nb"},
		{"RunsCollapsed", "a \t\u00a0 b", "a b"},
		{"NBSP", "a\u00a0b", "a b"},
		{"IdeographicSpace", "a\u3000b", "a b"},
		{"NarrowNBSP", "10\u202fkm", "10 km"},
		{"LeadingIndentCollapsed", "a\n    b", "a\n b"},
		{"WholeTextTrimmed", "\n\n  hello \n\n", "hello"},
		{"BlankLinesKept", "a\n\n\nb", "a\n\n\nb"},
		{"NFDToNFC", "cafe\u0301", "caf\u00e9"},
		{"NFCStays", "caf\u00e9", "caf\u00e9"},
		{"CaseKept", "Hello", "Hello"},
		{"PunctuationKept", "Hi!!  ...", "Hi!! ..."},
		{"EmojiKept", "ship it 🚀👩‍💻", "ship it 🚀👩‍💻"},
		{"ZeroWidthKept", "a\u200bb", "a\u200bb"},
		{"InvalidUTF8Kept", "a\xffb", "a\xffb"},
		{"VerticalTabNotCollapsed", "a\vb", "a\vb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := verify.Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := verify.Normalize(verify.Normalize(tt.in)); got != tt.want {
				t.Errorf("Normalize twice (%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeEquivalences(t *testing.T) {
	t.Parallel()
	equal := [][2]string{
		{"hello\u00a0world", "hello world"},
		{"line one\r\nline two", "line one\nline two"},
		{"re\u0301sume\u0301", "r\u00e9sum\u00e9"},
		{"  hi  ", "hi"},
		{"🎉 launch", "🎉  launch"},
	}
	for _, p := range equal {
		if verify.Normalize(p[0]) != verify.Normalize(p[1]) {
			t.Errorf("Normalize(%q) != Normalize(%q), want equal", p[0], p[1])
		}
	}
	different := [][2]string{
		{"Hello", "hello"},
		{"hello.", "hello"},
		{"hello", "hello!"},
		{"🚀", "🚀🚀"},
		{"a\nb", "a b"},
		{"a\n\nb", "a\nb"},
		{"ﬁ", "fi"}, // compatibility (NFKC) forms are not folded
	}
	for _, p := range different {
		if verify.Normalize(p[0]) == verify.Normalize(p[1]) {
			t.Errorf("Normalize(%q) == Normalize(%q), want different", p[0], p[1])
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"Empty", "", ""},
		{"Spaces", "  https://x.test/a  ", "https://x.test/a"},
		{"SchemeHostLowercased", "HTTPS://Example.TEST/Status/1", "https://example.test/Status/1"},
		{"DefaultHTTPSPort", "https://x.test:443/a", "https://x.test/a"},
		{"DefaultHTTPPort", "http://x.test:80/a", "http://x.test/a"},
		{"OtherPortKept", "http://127.0.0.1:8080/a", "http://127.0.0.1:8080/a"},
		{"CrossDefaultPortKept", "http://x.test:443/a", "http://x.test:443/a"},
		{"IPv6DefaultPort", "https://[::1]:443/a", "https://[::1]/a"},
		{"FragmentKept", "https://x.test/a#comment-3", "https://x.test/a#comment-3"},
		{"FragmentCaseKept", "HTTPS://X.test:443/a?p=1#Comment-3", "https://x.test/a?p=1#Comment-3"},
		{"FragmentEscapesKept", "https://x.test/a#c%20d", "https://x.test/a#c%20d"},
		{"EmptyFragmentDropped", "https://x.test/a#", "https://x.test/a"},
		{"FragmentOnEmptyPath", "https://x.test#c", "https://x.test/#c"},
		{"EmptyPathIsSlash", "https://x.test", "https://x.test/"},
		{"TrailingSlashKept", "https://x.test/a/", "https://x.test/a/"},
		{"PathCaseKept", "https://x.test/AbC", "https://x.test/AbC"},
		{"EscapesKept", "https://x.test/a%2Fb", "https://x.test/a%2Fb"},
		{"QueryKeptInOrder", "https://x.test/a?b=2&a=1", "https://x.test/a?b=2&a=1"},
		{"EmptyQueryDropped", "https://x.test/a?", "https://x.test/a"},
		{"OtherSchemeUnchanged", "FTP://X.test/a#f", "FTP://X.test/a#f"},
		{"RelativeUnchanged", "/status/1#x", "/status/1#x"},
		{"NotAURL", "hello world", "hello world"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := verify.NormalizeURL(tt.in)
			if got != tt.want {
				t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := verify.NormalizeURL(got); again != got {
				t.Errorf("NormalizeURL not idempotent on %q: %q", got, again)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "a\r\nb", " \u00a0x\t\ty ", "cafe\u0301", "\xff\xfe", "e\u00a0\u0301", "\u2000\u0301", "a \v\n \u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := verify.Normalize(s)
		if again := verify.Normalize(n); again != n {
			t.Fatalf("Normalize not idempotent: %q -> %q -> %q", s, n, again)
		}
	})
}

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"", "https://x.test", "HTTP://X:80/a?b#c", "https://[::1]:443", "http://u:p@h/%zz", "https://x.test/ a", "http://%41/", "https://x.test/a#%zz", "https://x.test/a# b", "https://x.test/a#c#d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := verify.NormalizeURL(s)
		if again := verify.NormalizeURL(n); again != n {
			t.Fatalf("NormalizeURL not idempotent: %q -> %q -> %q", s, n, again)
		}
	})
}
