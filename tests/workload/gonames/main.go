// SPDX-License-Identifier: MIT

// Workload for Go names (tests/integration/names.sh), built three ways by
// the Makefile: as is, with -ldflags="-s -w", and that stripped. Two
// goroutines spin in main.spinA (a method) and main.spinB (a function),
// main waits: every sampled stack is a goroutine's, whose root is
// runtime.goexit. No inlining in the spinning functions (go:noinline).
//
// usage: gonames [SECONDS]   (wall time, default 30)
package main

import (
	"os"
	"strconv"
	"time"
)

type spinner struct{ seed uint64 }

var sink uint64

//go:noinline
func (s *spinner) spinA(n int) uint64 {
	x := s.seed
	for i := 0; i < n; i++ { // spinA loop
		x = x*6364136223846793005 + uint64(i)
	}
	return x
}

//go:noinline
func spinB(n int) uint64 {
	x := uint64(7)
	for i := 0; i < n; i++ { // spinB loop
		x = x*6364136223846793005 + 1
	}
	return x
}

func main() {
	secs := 30.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	s := &spinner{seed: 3}
	go func() {
		for {
			sink += s.spinA(100000)
		}
	}()
	go func() {
		for {
			sink += spinB(100000)
		}
	}()
	time.Sleep(time.Duration(secs * float64(time.Second)))
}
