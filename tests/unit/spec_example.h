/* spec_example.h - SPEC.md's worked example: the 64-byte
 * PERF_RECORD_CALLCHAIN_DEFERRED a real kernel wrote (sample_type
 * IP|TID|TIME|CALLCHAIN|PERIOD, sample_id_all: trailer {pid, tid, time}).
 * The decoder must read it and the encoder must write it, byte for byte. */
#ifndef CS_TEST_SPEC_EXAMPLE_H
#define CS_TEST_SPEC_EXAMPLE_H

#include <stdint.h>

extern const uint8_t spec_deferred_record[64];

#endif
