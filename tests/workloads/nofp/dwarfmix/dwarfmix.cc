// dwarfmix - a workload without frame pointers, for DWARF unwinding.
//
// Built -O2 -fomit-frame-pointer (C and C++, as a distribution builds
// them), so that frame pointers give nothing and only the call frame
// information unwinds it. Threads each spend their time in one kind of
// stack:
//   - a comparator called back through libc's qsort          (C)
//   - a comparator called back through std::sort             (C++)
//   - deep recursion                                          (C)
//   - work inside a signal handler, on a timer's signal      (C)
// The threads are std::threads, so their stacks start in libstdc++.
//
//   dwarfmix [SECONDS] [DEPTH]        defaults: 1 60
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "dwarfmix.h"

namespace {

struct by_low_bits {
	// kept out of line, so std::sort calls it for every comparison
	__attribute__((noinline)) bool operator()(uint64_t a, uint64_t b) const
	{
		for (int i = 0; i < 8; i++)
			a ^= a >> 5, b ^= b >> 5;
		return (a & 0xffff) < (b & 0xffff);
	}
};

__attribute__((noinline)) void sort_loop(double until)
{
	std::vector<uint64_t> v(20000);
	uint64_t seed = 7;

	while (dm_now() < until) {
		for (auto &x : v)
			x = seed = seed * 6364136223846793005ULL + 1;
		std::sort(v.begin(), v.end(), by_low_bits());
	}
}

} // namespace

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
	int depth = argc > 2 ? std::atoi(argv[2]) : 60;
	double until = dm_now() + seconds;
	std::vector<std::thread> threads;

	threads.emplace_back(dm_qsort_loop, until);
	threads.emplace_back(sort_loop, until);
	threads.emplace_back(dm_recurse_loop, until, depth);
	threads.emplace_back(dm_signal_loop, until);
	for (auto &t : threads)
		t.join();
	return 0;
}
