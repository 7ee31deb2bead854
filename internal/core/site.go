package core

// siteDepth is how many frames a wait site keeps, after those skipped.
const siteDepth = 32

// siteWords returns the length of an fpstack record that keeps siteDepth
// frames after skip: the skip word, skip frames, siteDepth frames, and 4
// words for wrapper frames, which Record records and Frames leaves out.
//
// The wait sites are taken with fpstack.Record, as the detector's
// first-lock sites and edges are: a walk of frame pointers rather than
// runtime.Callers' walk of the runtime's tables (see fpstack).
func siteWords(skip int) int { return 1 + skip + siteDepth + 4 }
