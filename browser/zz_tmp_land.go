package browser

import (
	"context"
	"errors"
	"regexp"
)

type Landing struct {
	Navigation bool
	Selector   string
	URLChange  bool
	Response   *ResponseMatch
}
type ResponseMatch struct {
	Method string
	URL    *regexp.Regexp
}
type Landed struct {
	By          string
	Status      int
	URL         string
	ResponseURL string
}

func (t *Tab) ClickOnceAndLand(ctx context.Context, sel string, l Landing) (Landed, error) {
	s, err := t.ClickOnceAndWait(ctx, sel)
	return Landed{By: "navigation", Status: s}, err
}
func (t *Tab) FillFrame(ctx context.Context, f, sel, text string) (string, error) {
	return "", errors.New("tmp")
}
func (t *Tab) ValueFrame(ctx context.Context, f, sel string) (string, error) {
	return "", errors.New("tmp")
}
