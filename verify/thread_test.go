package verify_test

import (
	"errors"
	"testing"

	"github.com/browserop/browserop/verify"
)

func TestNextThreadPart(t *testing.T) {
	t.Parallel()
	const root, p0, p1 = "https://site.test/bob/status/1", "https://site.test/alice/status/10", "https://site.test/alice/status/11"
	tests := []struct {
		name       string
		parts      []verify.Part
		wantIndex  int
		wantParent string
		wantErr    bool
	}{
		{name: "FreshThread", parts: []verify.Part{{}, {}, {}}, wantIndex: 0, wantParent: ""},
		{name: "FreshReplyThread", parts: []verify.Part{{Parent: root}, {}}, wantIndex: 0, wantParent: root},
		{name: "ResumeAtSecond", parts: []verify.Part{{Verified: true, URL: p0}, {}, {}}, wantIndex: 1, wantParent: p0},
		{name: "ResumeAtThird", parts: []verify.Part{{Verified: true, URL: p0}, {Verified: true, URL: p1, Parent: p0}, {Parent: p1}}, wantIndex: 2, wantParent: p1},
		{name: "RecordedParentNormalized", parts: []verify.Part{{Verified: true, URL: p0}, {Parent: "HTTPS://site.test:443/alice/status/10"}}, wantIndex: 1, wantParent: p0},
		{name: "AllVerified", parts: []verify.Part{{Verified: true, URL: p0}, {Verified: true, URL: p1}}, wantIndex: 2, wantParent: ""},
		{name: "ErrEmpty", parts: nil, wantErr: true},
		{name: "ErrGap", parts: []verify.Part{{Verified: true, URL: p0}, {}, {Verified: true, URL: p1}}, wantErr: true},
		{name: "ErrLaterVerifiedFirstNot", parts: []verify.Part{{}, {Verified: true, URL: p1}}, wantErr: true},
		{name: "ErrVerifiedWithoutURL", parts: []verify.Part{{Verified: true}, {}}, wantErr: true},
		{name: "ErrSameURLTwice", parts: []verify.Part{{Verified: true, URL: p0}, {Verified: true, URL: p0}}, wantErr: true},
		{name: "ErrParentMismatch", parts: []verify.Part{{Verified: true, URL: p0}, {Parent: root}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			i, parent, err := verify.NextThreadPart(tt.parts)
			if tt.wantErr {
				if !errors.Is(err, verify.ErrThreadCorrupt) {
					t.Fatalf("got err %v, want ErrThreadCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got err %v, want nil", err)
			}
			if i != tt.wantIndex || parent != tt.wantParent {
				t.Errorf("got (%d, %q), want (%d, %q)", i, parent, tt.wantIndex, tt.wantParent)
			}
		})
	}
}
