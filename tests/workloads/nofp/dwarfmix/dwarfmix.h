/* dwarfmix.h - the C half of the dwarfmix workload, called from C++. */
#ifndef DWARFMIX_H
#define DWARFMIX_H

#ifdef __cplusplus
extern "C" {
#endif

double dm_now(void);
void dm_qsort_loop(double until);	/* a comparator called back by libc */
void dm_recurse_loop(double until, int depth);
void dm_signal_loop(double until);	/* work inside a signal handler */

#ifdef __cplusplus
}
#endif
#endif
