package demosite

// UploadCount returns how many uploads s holds, so tests can see that a
// refused, failed or abandoned upload stored nothing.
func UploadCount(s *Server) int { return s.store.uploadCount() }
