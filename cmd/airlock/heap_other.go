//go:build !linux

package main

// warmHeap is a no-op where the kernel's transparent huge pages are not known to
// need asking for (heap_linux.go).
func warmHeap() (done func()) { return func() {} }
