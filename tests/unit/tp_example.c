/* tp_example.c - see tp_example.h. */
#include "tp_example.h"

#include <string.h>

#include "lib/write/feature.h"

const char tp_wakeup_format[] =
	"name: sched_wakeup\n"
	"ID: 374\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, "
	"REC->pid, REC->prio, REC->target_cpu\n";

const char tp_switch_format[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%lx ==> "
	"next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
	"REC->prev_prio, REC->prev_state, REC->next_comm, REC->next_pid, "
	"REC->next_prio\n";

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static void put_file(struct cs_fbuf *b, const char *text, int size_bytes)
{
	size_t n = strlen(text);

	if (size_bytes == 4)
		cs_fbuf_u32(b, (uint32_t)n);
	else
		cs_fbuf_u64(b, n);
	cs_fbuf_bytes(b, text, n);
}

/* perf's tracing data (version 0.6) with the sched system's formats */
void tp_example_tracing_data(struct cs_fbuf *b, const char *const *formats,
			     size_t nr)
{
	static const char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	static const uint8_t endian_long[2] = { 0, 8 };

	cs_fbuf_bytes(b, magic, sizeof(magic));
	cs_fbuf_bytes(b, "0.6", 4);
	cs_fbuf_bytes(b, endian_long, 2);
	cs_fbuf_u32(b, 4096);
	cs_fbuf_bytes(b, "header_page", 12);
	put_file(b, header_page, 8);
	cs_fbuf_bytes(b, "header_event", 13);
	put_file(b, "# compressed entry header\n", 8);
	cs_fbuf_u32(b, 0);			/* ftrace */
	cs_fbuf_u32(b, 1);			/* one system */
	cs_fbuf_bytes(b, "sched", 6);
	cs_fbuf_u32(b, (uint32_t)nr);
	for (size_t i = 0; i < nr; i++)
		put_file(b, formats[i], 8);
	cs_fbuf_u32(b, 0);			/* kallsyms */
	put_file(b, "", 4);			/* printk formats */
	put_file(b, "1234 workload\n", 8);	/* saved cmdlines */
}

size_t tp_example_switch_raw(uint8_t raw[64], int32_t prev_pid, int64_t prev_state,
			     int32_t next_pid)
{
	uint16_t type = TP_SWITCH_ID;

	memset(raw, 0, 64);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &prev_pid, 4);
	memcpy(raw + 8, "task", 4);
	memcpy(raw + 24, &prev_pid, 4);
	memcpy(raw + 32, &prev_state, 8);
	memcpy(raw + 40, "next", 4);
	memcpy(raw + 56, &next_pid, 4);
	return 64;
}
