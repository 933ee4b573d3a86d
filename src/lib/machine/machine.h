/* machine.h - threads, their memory maps, and where an address lies.
 *
 * Fed the side-band records in time order (COMM, MMAP, MMAP2, FORK, EXIT,
 * KSYMBOL); answers cs_machine_resolve() and cs_machine_comm() (public, in
 * callstitch.h) for the state at that point of the stream. Symbol tables
 * are loaded once per binary, on first use.
 */
#ifndef CS_MACHINE_H
#define CS_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>
#include "lib/unwind/unwind.h"
#include "lib/machine/debuginfod.h"
#include "lib/machine/dso.h"

struct cs_machine_opts {
	const char *kallsyms;		/* NULL: looked for (dso.h) */
	const char *symfs;		/* NULL: binaries at their recorded paths */
	const char *archive;		/* an unpacked archive's directory */
	const char *sysroot;		/* a container's root file system */
	const char *jit_map;		/* perf-PID.map files: a directory or one */
	const char *hostname;		/* of the recording: is it this host? */
	const char *os_release;
	bool no_debuginfod;		/* never fetch, even when configured */
	struct cs_fetch_hooks hooks;	/* download progress, warnings */
	/* threads that load symbols ahead (cs_machine_preload()); 0: none */
	unsigned int preload_workers;
	bool preload_inlines;		/* ... and open the binaries' DWARF */
};

/* Returns 0 and a new machine in *out (caller frees), or -ENOMEM. */
int cs_machine_new(const struct cs_machine_opts *o, struct cs_machine **out);

/* Build ids known from the file's header, keyed by path. */
int cs_machine_add_build_id(struct cs_machine *m, const char *path,
			    const uint8_t *build_id, size_t size, bool kernel);

/* After the header's build ids are added: with preload_workers, worker
 * threads start loading the symbols of the binaries the header lists as
 * sampled (and their DWARF with preload_inlines), and of the kernel once
 * its map is seen, ahead of the first address resolved in each (dso.h,
 * cs_dso_preload()). Answers, counts, messages and cache writes stay
 * those of loading on first use, at the same points of the stream. Call
 * only when the caller will resolve every sample's frames: a binary the
 * run would not load must not be loaded. Returns 0 or -ENOMEM. */
int cs_machine_preload(struct cs_machine *m);

/* Applies a side-band event; other types are ignored. Returns 0 or -ENOMEM. */
int cs_machine_event(struct cs_machine *m, const struct cs_event *ev);

/* cs_machine_comm() as perf sees it at `time`: NULL for a thread that had
 * exited by then (perf forgets threads at EXIT and names later samples of
 * the tid ":TID"). */
const char *cs_machine_comm_at(struct cs_machine *m, uint32_t pid, uint32_t tid,
			       uint64_t time);

/* Whether an address in cpumode is resolved as a kernel address. */
static inline bool cs_machine_is_kernel(uint8_t cpumode, uint64_t addr)
{
	return cpumode == 1 /* CS_MISC_KERNEL */ ||
	       cpumode == 4 /* CS_MISC_GUEST_KERNEL */ ||
	       (cpumode == 0 /* CS_MISC_CPUMODE_UNKNOWN */ &&
		addr >= 0xffff800000000000ULL);
}

/* The numbers of the address spaces that user addresses of pid and kernel
 * addresses are resolved in. A space gets a new number whenever its maps
 * or symbols change, so (space, address) keys a cache of anything made of
 * cs_machine_resolve() and cs_machine_inlines() answers: it never goes
 * stale and never needs flushing. */
uint64_t cs_machine_user_space(struct cs_machine *m, uint32_t pid);
uint64_t cs_machine_kernel_space(const struct cs_machine *m);

/* Asks early for the memory cs_machine_resolve() will read first for
 * these arguments, so that a caller about to resolve several addresses
 * overlaps their cache misses. */
void cs_machine_prefetch(struct cs_machine *m, uint32_t pid, uint8_t cpumode,
			 uint64_t addr);

/* The lengths of a location's names, as the tables that hold the names
 * keep them: a caller that copies the names need not measure them first
 * (for a name it has not read yet, a cache miss that everything after
 * it waited for). */
struct cs_loc_lens {
	size_t sym;			/* strlen(loc->sym); 0 without one */
	size_t dso;			/* strlen(loc->dso_name); 0 without one */
};

/* cs_machine_resolve() without its cache, for a caller that caches what
 * it makes of the answer itself (an address it asks about twice is one
 * it could not keep): the cache would only cost a random memory access.
 * lens (NULL: not wanted) gets the lengths of loc's names. */
void cs_machine_resolve_once(struct cs_machine *m, uint32_t pid,
			     uint8_t cpumode, uint64_t addr,
			     struct cs_location *loc, struct cs_loc_lens *lens);

/* Where user address addr of pid lies: the binary mapped there (*bin,
 * shared by every process that maps it, valid while the machine lives)
 * and addr's offset in its file (*off). Every name cs_machine_resolve()
 * and cs_machine_inlines() give addr - symbol, offset, dso, inlined
 * calls - depends on these two alone, not on the process or the address,
 * so they key a cache of names across processes. False when no map holds
 * addr: it resolves to nothing. */
bool cs_machine_user_place(struct cs_machine *m, uint32_t pid, uint64_t addr,
			   const void **bin, uint64_t *off);

/* Loads the symbols of binary bin (from cs_machine_user_place()) as the
 * first address resolved in it would, at this point of the stream: its
 * messages, counts and cache writes happen now. */
void cs_machine_place_load(struct cs_machine *m, const void *bin);

/* cs_machine_place_load(), and bin's inlined functions made ready for
 * cs_machine_place_inlines(), as the first cs_machine_inlines() of an
 * address in it would. */
void cs_machine_place_load_inlines(struct cs_machine *m, const void *bin);

/* Whether cs_machine_place_load() of bin (with inlines,
 * cs_machine_place_load_inlines()) would still load anything - read
 * files, count a binary missing or of another build, write the symbol
 * cache - as the first address named in it does. A caller that does not
 * know yet whether it will name an address of bin asks this first: a
 * binary no output line names must not be loaded. */
bool cs_machine_place_loads(const void *bin, bool inlines);

/* Whether addresses of bin, loaded with cs_machine_place_load_inlines(),
 * may have inlined calls (cs_machine_place_inlines() more than 0): it has
 * DWARF to say so. */
bool cs_machine_place_inlined(const void *bin);

/* What cs_machine_resolve() gives a user address at (bin, off) but the
 * map's fields (map_start, map_end, map_pgoff), without the machine: for
 * a thread of the caller's that names addresses the reading thread
 * placed. bin must have been loaded (cs_machine_place_load()), and while
 * that thread asks, no other may resolve an address in the same binary
 * (a lookup fills the symbol table's caches). Names live as long as the
 * machine; lens (NULL: not wanted) gets their lengths. */
void cs_machine_place_resolve(const void *bin, uint64_t off,
			      struct cs_location *loc, struct cs_loc_lens *lens);

/* What cs_machine_inlines() gives a user address at (bin, off), under
 * the same rules, once cs_machine_place_load_inlines() made bin ready. */
size_t cs_machine_place_inlines(const void *bin, uint64_t off,
				const char **names, size_t cap);

/* The same for kernel addresses: false when a KSYMBOL (a BPF program, a
 * trampoline) holds addr, whose name a later record may free - resolve
 * it here. Otherwise loads the kernel's symbols as the first kernel
 * address resolved would, and gives what cs_machine_kernel_place_resolve()
 * needs: their table (*tab) and whether addr is outside the kernel's map
 * at this point of the stream (*outside). */
bool cs_machine_kernel_place(struct cs_machine *m, uint64_t addr,
			     const void **tab, bool *outside);

/* Whether the next kernel address resolved or placed would load the
 * kernel's symbols first (cs_machine_place_loads()'s question). */
bool cs_machine_kernel_loads(const struct cs_machine *m);

/* What cs_machine_resolve() gives kernel address addr, from
 * cs_machine_kernel_place()'s answers, under cs_machine_place_resolve()'s
 * rules: no other thread may resolve kernel addresses meanwhile. */
void cs_machine_kernel_place_resolve(const void *tab, bool outside,
				     uint64_t addr, struct cs_location *loc,
				     struct cs_loc_lens *lens);

/* For the unwinder: the binary mapped at user address addr of pid at this
 * point of the stream, its file (found on first use, without reading its
 * symbols), its load bias, and how to find its debug file if its own CFI
 * falls short. False if no map holds addr or the map has no binary
 * (anonymous memory, JIT code). Strings live until the machine is freed;
 * mod->key is the binary's dso, shared by every process that maps it. */
bool cs_machine_unwind_module(struct cs_machine *m, uint32_t pid,
			      uint64_t addr, struct cs_unwind_module *mod);

/* Functions the compiler inlined at a user address of pid (from the
 * binary's DWARF), innermost first, without the function they sit in -
 * what perf script prints as "(inlined)" frames. Fills names[0..cap) and
 * returns how many there are; 0 for kernel addresses or without debug
 * info. Names live until the machine is freed. */
size_t cs_machine_inlines(struct cs_machine *m, uint32_t pid, uint64_t addr,
			  const char **names, size_t cap);

/* How many binaries were refused because their build id differs from the
 * recorded one (their frames show [unknown]); *first names one. The name
 * lives until the machine is freed. */
size_t cs_machine_build_id_mismatches(const struct cs_machine *m,
				      const char **first);

/* Why kernel symbols could not be loaded (the kallsyms file is missing,
 * not kallsyms, or its addresses are hidden), or NULL. Valid until the
 * machine is freed. */
const char *cs_machine_kallsyms_error(const struct cs_machine *m);

/* How many binaries asked about so far had no file to read (not found,
 * or only with another build id); *first names one, valid until the
 * machine is freed. */
size_t cs_machine_files_missing(const struct cs_machine *m, const char **first);

/* Every file symbols were read from so far (see dso.h), and the kernel's
 * symbol list (CS_FILE_KALLSYMS, "[kernel.kallsyms]", the kernel's
 * recorded build id) once it was loaded. */
int cs_machine_for_each_file(struct cs_machine *m, cs_dso_file_fn fn, void *ctx);

void cs_machine_free(struct cs_machine *m);

#endif
