/* test_record_events.c - perf's event syntax, against a sysfs and a tracefs
 * of our own making (a PMU "cpu" with formats and named events, and a few
 * tracepoints), and the tracing data built from that tracefs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "lib/util/errbuf.h"
#include "lib/write/feature.h"
#include "record/event_parse.h"
#include "record/events.h"
#include "record/record.h"
#include "record/tracing_data.h"

static char root[64];
static char pmus[128], tracefs[128];
static struct cs_rec_event_roots roots = { tracefs, pmus };

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the file's directory */
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_record_events.%d", (int)getpid());
	snprintf(pmus, sizeof(pmus), "%s/pmus", root);
	snprintf(tracefs, sizeof(tracefs), "%s/tracing", root);
	put("pmus/cpu/type", "4\n");
	put("pmus/cpu/format/event", "config:0-7\n");
	put("pmus/cpu/format/umask", "config:8-15\n");
	put("pmus/cpu/format/cmask", "config:24-31\n");
	put("pmus/cpu/format/split", "config1:0-3,8-11\n");
	put("pmus/cpu/format/edge", "config:18\n");
	put("pmus/cpu/events/cycles", "event=0x3c\n");
	put("pmus/cpu/events/mem-loads", "event=0xcd,umask=0x1\n");
	put("pmus/cpu/events/cycles.scale", "1\n");
	put("tracing/events/header_page", "\tfield: u64 timestamp;\n");
	put("tracing/events/header_event", "# compressed entry header\n");
	put("tracing/events/sched/sched_switch/id", "316\n");
	put("tracing/events/sched/sched_switch/format", "name: sched_switch\nID: 316\n");
	put("tracing/events/sched/sched_wakeup/id", "320\n");
	put("tracing/events/sched/sched_wakeup/format", "name: sched_wakeup\nID: 320\n");
	put("tracing/events/sched/enable", "0\n");
	put("tracing/events/syscalls/sys_enter_read/id", "700\n");
	put("tracing/events/syscalls/sys_enter_read/format", "name: sys_enter_read\n");
	put("tracing/events/syscalls/sys_enter_write/id", "702\n");
	put("tracing/events/syscalls/sys_enter_write/format", "name: sys_enter_write\n");
	put("tracing/events/syscalls/sys_exit_read/id", "701\n");
	put("tracing/events/syscalls/sys_exit_read/format", "name: sys_exit_read\n");
	put("tracing/printk_formats", "0xffffffff81000000 : \"hello\"\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static struct cs_rec_events parse_ok(const char *arg)
{
	struct cs_rec_events l = { 0 };
	struct cs_errbuf eb = { { 0 } };
	int err = cs_rec_events_parse(&l, arg, &roots, &eb);

	if (err)
		fail_msg("'%s': %d %s", arg, err, eb.msg);
	return l;
}

static int parse_err(const char *arg, char *msg, size_t size)
{
	struct cs_rec_events l = { 0 };
	struct cs_errbuf eb = { { 0 } };
	int err = cs_rec_events_parse(&l, arg, &roots, &eb);

	assert_int_equal(l.nr, 0);
	snprintf(msg, size, "%s", eb.msg);
	return err;
}

static void symbolic_names_are_perfs(void **state)
{
	struct cs_rec_events l = parse_ok("cycles,instructions,cpu-clock,cs,page-faults");

	(void)state;
	assert_int_equal(l.nr, 5);
	assert_int_equal(l.v[0].type, CS_PERF_TYPE_HARDWARE);
	assert_int_equal(l.v[0].config, 0);
	assert_int_equal(l.v[1].config, 1);
	assert_int_equal(l.v[2].type, CS_PERF_TYPE_SOFTWARE);
	assert_int_equal(l.v[2].config, 0);
	assert_int_equal(l.v[3].config, 3);
	assert_int_equal(l.v[4].config, 2);
	assert_string_equal(l.v[3].name, "cs");
	assert_null(l.v[0].tp_system);
	cs_rec_events_free(&l);
}

static void modifiers_exclude_what_is_not_named(void **state)
{
	struct cs_rec_events l = parse_ok("cycles:u,instructions:kpp,cpu-clock:uk");

	(void)state;
	assert_int_equal(l.v[0].flags, CS_ATTR_EXCLUDE_KERNEL | CS_ATTR_EXCLUDE_HV);
	assert_string_equal(l.v[0].name, "cycles:u");
	assert_int_equal(l.v[1].flags, CS_ATTR_EXCLUDE_USER | CS_ATTR_EXCLUDE_HV |
			 2ULL << CS_ATTR_PRECISE_SHIFT);
	assert_int_equal(l.v[2].flags, CS_ATTR_EXCLUDE_HV);
	cs_rec_events_free(&l);
}

static void raw_events_are_hex_configs(void **state)
{
	struct cs_rec_events l = parse_ok("r01c2,r1a:u");

	(void)state;
	assert_int_equal(l.v[0].type, CS_PERF_TYPE_RAW);
	assert_int_equal(l.v[0].config, 0x1c2);
	assert_int_equal(l.v[1].config, 0x1a);
	assert_string_equal(l.v[0].name, "r01c2");
	cs_rec_events_free(&l);
}

static void cache_events_combine_cache_op_and_result(void **state)
{
	struct cs_rec_events l = parse_ok("L1-dcache-load-misses,LLC-stores,dTLB-loads,"
					  "branch-load-misses");

	(void)state;
	assert_int_equal(l.v[0].type, CS_PERF_TYPE_HW_CACHE);
	assert_int_equal(l.v[0].config, 0 | 0 << 8 | 1 << 16);
	assert_int_equal(l.v[1].config, 2 | 1 << 8 | 0 << 16);
	assert_int_equal(l.v[2].config, 3);
	assert_int_equal(l.v[3].config, 5 | 1 << 16);
	cs_rec_events_free(&l);
}

static void pmu_terms_fill_the_format_bits(void **state)
{
	struct cs_rec_events l = parse_ok("cpu/event=0x3c,umask=0/,cpu/event=0xc0,umask=0x1,"
					  "cmask=2,edge,split=0x5a,period=1000/u");

	(void)state;
	assert_int_equal(l.nr, 2);
	assert_int_equal(l.v[0].type, 4);
	assert_int_equal(l.v[0].config, 0x3c);
	assert_string_equal(l.v[0].name, "cpu/event=0x3c,umask=0/");
	assert_int_equal(l.v[1].config, 0xc0 | 0x100 | 2 << 24 | 1 << 18);
	/* 0x5a: low 4 bits at 0-3, the next 4 at 8-11 */
	assert_int_equal(l.v[1].config1, 0xa | 0x5 << 8);
	assert_int_equal(l.v[1].period, 1000);
	assert_false(l.v[1].freq);
	assert_int_equal(l.v[1].flags, CS_ATTR_EXCLUDE_KERNEL | CS_ATTR_EXCLUDE_HV);
	cs_rec_events_free(&l);
}

static void pmu_named_events_expand_to_their_terms(void **state)
{
	struct cs_rec_events l = parse_ok("cpu/cycles/,cpu/mem-loads,name=loads/");

	(void)state;
	assert_int_equal(l.v[0].config, 0x3c);
	assert_int_equal(l.v[1].config, 0xcd | 0x100);
	assert_string_equal(l.v[1].name, "loads");
	cs_rec_events_free(&l);
}

static void pmu_mistakes_are_named(void **state)
{
	char msg[512];

	(void)state;
	assert_int_equal(parse_err("nopmu/event=1/", msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "no PMU named 'nopmu'"));
	assert_int_equal(parse_err("cpu/bogus=1/", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "no term or event 'bogus'"));
	assert_int_equal(parse_err("cpu/event=0x1ff/", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "too large"));
	assert_int_equal(parse_err("cpu/event=zz/", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(parse_err("cpu/event=1", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(parse_err("cpu/cycles.scale/", msg, sizeof(msg)), -EINVAL);
}

static void tracepoints_take_their_id_from_tracefs(void **state)
{
	struct cs_rec_events l = parse_ok("sched:sched_switch");

	(void)state;
	assert_int_equal(l.nr, 1);
	assert_int_equal(l.v[0].type, CS_PERF_TYPE_TRACEPOINT);
	assert_int_equal(l.v[0].config, 316);
	assert_string_equal(l.v[0].name, "sched:sched_switch");
	assert_string_equal(l.v[0].tp_system, "sched");
	assert_string_equal(l.v[0].tp_name, "sched_switch");
	assert_true(cs_rec_event_is_tracepoint(&l.v[0]));
	cs_rec_events_free(&l);
}

static void tracepoint_globs_stand_for_every_match_sorted(void **state)
{
	struct cs_rec_events l = parse_ok("syscalls:sys_enter_*,*:sched_w*");

	(void)state;
	assert_int_equal(l.nr, 3);
	assert_string_equal(l.v[0].name, "syscalls:sys_enter_read");
	assert_int_equal(l.v[0].config, 700);
	assert_string_equal(l.v[1].name, "syscalls:sys_enter_write");
	assert_string_equal(l.v[2].name, "sched:sched_wakeup");
	cs_rec_events_free(&l);
}

static void unknown_names_are_refused_whole(void **state)
{
	struct cs_rec_events l = parse_ok("cycles");
	struct cs_errbuf eb = { { 0 } };
	char msg[512];

	(void)state;
	/* a bad item leaves the list as it was */
	assert_int_equal(cs_rec_events_parse(&l, "instructions,nosuch", &roots, &eb),
			 -EINVAL);
	assert_int_equal(l.nr, 1);
	assert_non_null(strstr(eb.msg, "unknown event 'nosuch'"));
	cs_rec_events_free(&l);
	assert_int_equal(parse_err("sched:nosuch", msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "unknown tracepoint 'sched:nosuch'"));
	assert_int_equal(parse_err("nosys:sys_*", msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "no tracepoint matches"));
	assert_int_equal(parse_err("cycles:x", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "unknown modifier 'x'"));
	assert_int_equal(parse_err("cycles:pppp", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(parse_err("{cycles,instructions}", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(parse_err("cycles,", msg, sizeof(msg)), -EINVAL);
	assert_int_equal(parse_err("", msg, sizeof(msg)), -EINVAL);
}

static void cpu_lists_read_as_the_kernel_writes_them(void **state)
{
	int *cpus;

	(void)state;
	assert_int_equal(cs_rec_cpu_list_parse("0-3,5,7-8\n", &cpus), 7);
	assert_int_equal(cpus[4], 5);
	assert_int_equal(cpus[6], 8);
	free(cpus);
	assert_int_equal(cs_rec_cpu_list_parse("3,1,1-2", &cpus), 3);
	assert_int_equal(cpus[0], 1);
	assert_int_equal(cpus[2], 3);
	free(cpus);
	assert_int_equal(cs_rec_cpu_list_parse("", &cpus), -EINVAL);
	assert_int_equal(cs_rec_cpu_list_parse("2-1", &cpus), -EINVAL);
	assert_int_equal(cs_rec_cpu_list_parse("a", &cpus), -EINVAL);
	assert_int_equal(cs_rec_cpu_list_parse("1,", &cpus), -EINVAL);
}

/* a u32/u64 read from the tracing data at *off, advancing */
static uint64_t take(const struct cs_fbuf *b, size_t *off, size_t n)
{
	uint64_t v = 0;

	assert_true(*off + n <= b->len);
	memcpy(&v, b->p + *off, n);
	*off += n;
	return v;
}

static void take_text(const struct cs_fbuf *b, size_t *off, const char *want)
{
	size_t n = strlen(want);

	assert_true(*off + n <= b->len);
	assert_memory_equal(b->p + *off, want, n);
	*off += n;
}

/* a file as the tracing data holds it: its size in size_bytes, then it */
static void take_file(const struct cs_fbuf *b, size_t *off, size_t size_bytes,
		      const char *want)
{
	assert_int_equal(take(b, off, size_bytes), strlen(want));
	take_text(b, off, want);
}

static void tracing_data_holds_the_formats_of_what_is_recorded(void **state)
{
	struct cs_rec_events l = parse_ok("sched:sched_switch,cycles,syscalls:sys_enter_read,"
					  "sched:sched_switch:u");
	struct cs_fbuf b = { 0 };
	struct cs_errbuf eb = { { 0 } };
	size_t off = 0;

	(void)state;
	assert_int_equal(cs_rec_tracing_data(tracefs, l.v, l.nr, &b, &eb), 0);
	take_text(&b, &off, "\027\010\104tracing0.6");
	assert_int_equal(take(&b, &off, 1), 0);		/* the version's NUL */
	assert_int_equal(take(&b, &off, 1), 0);		/* little endian */
	assert_int_equal(take(&b, &off, 1), sizeof(long));
	assert_int_equal(take(&b, &off, 4), (uint64_t)sysconf(_SC_PAGESIZE));
	take_text(&b, &off, "header_page");
	assert_int_equal(take(&b, &off, 1), 0);
	take_file(&b, &off, 8, "\tfield: u64 timestamp;\n");
	take_text(&b, &off, "header_event");
	assert_int_equal(take(&b, &off, 1), 0);
	take_file(&b, &off, 8, "# compressed entry header\n");
	assert_int_equal(take(&b, &off, 4), 0);		/* no ftrace events */
	assert_int_equal(take(&b, &off, 4), 2);		/* two systems */
	take_text(&b, &off, "sched");
	assert_int_equal(take(&b, &off, 1), 0);
	assert_int_equal(take(&b, &off, 4), 1);		/* sched_switch once */
	take_file(&b, &off, 8, "name: sched_switch\nID: 316\n");
	take_text(&b, &off, "syscalls");
	assert_int_equal(take(&b, &off, 1), 0);
	assert_int_equal(take(&b, &off, 4), 1);
	take_file(&b, &off, 8, "name: sys_enter_read\n");
	assert_int_equal(take(&b, &off, 4), 0);		/* kallsyms */
	take_file(&b, &off, 4, "0xffffffff81000000 : \"hello\"\n");
	assert_int_equal(take(&b, &off, 8), 0);		/* no saved_cmdlines */
	assert_int_equal(off, b.len);			/* nothing more */
	cs_fbuf_free(&b);
	cs_rec_events_free(&l);
}

static void tracing_data_names_a_missing_format(void **state)
{
	struct cs_rec_events l = parse_ok("sched:sched_wakeup");
	struct cs_fbuf b = { 0 };
	struct cs_errbuf eb = { { 0 } };
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/events/sched/sched_wakeup/format", tracefs);
	unlink(path);
	assert_int_equal(cs_rec_tracing_data(tracefs, l.v, l.nr, &b, &eb), -ENOENT);
	assert_non_null(strstr(eb.msg, path));
	cs_fbuf_free(&b);
	cs_rec_events_free(&l);
}

/* Rings as big as the rate needs: a tracepoint at every hit (--off-cpu's
 * sched_switch) and dwarf copies get more than perf's 128 pages. */
static void default_rings_fit_what_is_recorded(void **state)
{
	struct cs_rec_event cpu_clock = { .type = CS_PERF_TYPE_SOFTWARE };
	struct cs_rec_event every_hit = { .tp_system = "sched", .period = 1 };
	struct cs_rec_event sampled = { .tp_system = "sched" };
	struct cs_rec_event both[] = { cpu_clock, every_hit };
	struct cs_record_opts o = { .events = { &cpu_clock, 1 } };

	(void)state;
	assert_int_equal(cs_record_default_pages(&o), 128);
	o.dwarf_stack = 8192;
	assert_int_equal(cs_record_default_pages(&o), 512);
	o.dwarf_stack = 0;
	o.events = (struct cs_rec_events){ both, 2 };
	assert_int_equal(cs_record_default_pages(&o), 1024);
	o.dwarf_stack = 8192;
	assert_int_equal(cs_record_default_pages(&o), 1024);
	o.dwarf_stack = 0;
	/* a tracepoint takes -c/-F when given: no longer every hit */
	o.events = (struct cs_rec_events){ &sampled, 1 };
	assert_int_equal(cs_record_default_pages(&o), 1024);
	o.period_given = true;
	assert_int_equal(cs_record_default_pages(&o), 128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolic_names_are_perfs),
		cmocka_unit_test(default_rings_fit_what_is_recorded),
		cmocka_unit_test(modifiers_exclude_what_is_not_named),
		cmocka_unit_test(raw_events_are_hex_configs),
		cmocka_unit_test(cache_events_combine_cache_op_and_result),
		cmocka_unit_test(pmu_terms_fill_the_format_bits),
		cmocka_unit_test(pmu_named_events_expand_to_their_terms),
		cmocka_unit_test(pmu_mistakes_are_named),
		cmocka_unit_test(tracepoints_take_their_id_from_tracefs),
		cmocka_unit_test(tracepoint_globs_stand_for_every_match_sorted),
		cmocka_unit_test(unknown_names_are_refused_whole),
		cmocka_unit_test(cpu_lists_read_as_the_kernel_writes_them),
		cmocka_unit_test(tracing_data_holds_the_formats_of_what_is_recorded),
		cmocka_unit_test(tracing_data_names_a_missing_format),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
