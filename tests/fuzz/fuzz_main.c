/* libFuzzer's entry point for one target, chosen at compile time with
 * -DFUZZ_TARGET=fuzz_model (or fuzz_text, fuzz_corpus, fuzz_dump, fuzz_keys). */
#include "fuzz.h"

#ifndef FUZZ_TARGET
#error "compile with -DFUZZ_TARGET=<entry point>"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return FUZZ_TARGET(data, size);
}
