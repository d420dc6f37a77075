// Package unread tells whether the terminal holds typed bytes the program has not
// read yet: the input guard of the questions waits for those keys too, so that a
// key typed before a question opened can never answer it. One file per platform
// (TIOCINQ on Linux, FIONREAD on macOS and the BSDs, unknown elsewhere).
package unread
