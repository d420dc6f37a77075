// Package pollstdin reads the process's stdin through Go's poller when it is a pipe,
// so that no OS thread waits in a blocking read(2) while a stdio peer is quiet.
package pollstdin
