//go:build !unix

package api

import "os"

func checkOwner(os.FileInfo) error { return nil }
