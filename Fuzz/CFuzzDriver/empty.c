// CFuzzDriver declares LLVMFuzzerRunDriver (include/CFuzzDriver.h), which the harnesses' own main calls.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// An unoptimised build (make fuzz-smoke) renames each executable's main, as SwiftPM does so that tests
// can link an executable's module, and the linker then also takes libFuzzer's own main from its
// runtime, which names this callback. The harness's main (Fuzz/Driver) is still the one that runs and
// hands libFuzzer its own callback; should libFuzzer's main ever run instead, this says so and stops.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    (void)data;
    (void)size;
    fputs("fuzz: libFuzzer's own main ran instead of the harness's (Fuzz/Driver)\n", stderr);
    abort();
}
