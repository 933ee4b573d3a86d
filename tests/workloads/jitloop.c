/* jitloop - runs code it wrote into anonymous executable memory, as a JIT
 * does, and names it in /tmp/perf-PID.map (perf's JIT map format), so
 * that profiles have frames only such a map can name.
 *
 *   jitloop [SECONDS]      default 0.5
 *
 * Two generated functions, jit_spin_a and jit_spin_b, each a counted loop
 * (x86-64 machine code: mov ecx, N; 1: dec ecx; jnz 1b; ret).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FUNC_SIZE 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void emit_loop(unsigned char *p, uint32_t count)
{
	static const unsigned char tail[] = { 0xff, 0xc9, 0x75, 0xfc, 0xc3 };

	p[0] = 0xb9;			/* mov ecx, imm32 */
	memcpy(p + 1, &count, 4);
	memcpy(p + 5, tail, sizeof(tail));	/* dec ecx; jnz -4; ret */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5, end;
	unsigned char *code;
	void (*spin_a)(void), (*spin_b)(void);
	char path[64];
	FILE *map;

#if !defined(__x86_64__)
	fprintf(stderr, "jitloop: x86-64 only\n");
	return 2;
#endif
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitloop: mmap");
		return 1;
	}
	emit_loop(code, 200000);
	emit_loop(code + FUNC_SIZE, 100000);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	fprintf(map, "%lx %x jit_spin_a\n%lx %x jit_spin_b\n",
		(unsigned long)(uintptr_t)code, FUNC_SIZE,
		(unsigned long)(uintptr_t)(code + FUNC_SIZE), FUNC_SIZE);
	fclose(map);
	spin_a = (void (*)(void))(uintptr_t)code;
	spin_b = (void (*)(void))(uintptr_t)(code + FUNC_SIZE);
	for (end = now() + seconds; now() < end;) {
		spin_a();
		spin_b();
	}
	return 0;
}
