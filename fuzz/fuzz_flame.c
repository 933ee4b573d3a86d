/* fuzz_flame.c - the flame graph's tree and page fed hostile names
 * (fuzz/names.h): its JSON must stay well-formed UTF-8 with no '<', so no
 * name can close the page's <script> or inject one. */
#include "fuzz.h"
#include "names.h"
#include "outputs/flame.h"

#include <stdlib.h>
#include <string.h>

static void check_page(const struct cs_flame *f, const struct cs_flame_meta *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		fuzz_fail("fuzz_flame: open_memstream");
	cs_flame_write_json(f, m, out);
	fclose(out);
	names_check_json(buf, len);
	free(buf);
	cs_flame_write_html(f, m, fuzz_devnull());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct names_input in;
	struct names_stack st;
	struct cs_flame_meta m = { 0 };
	struct cs_flame *f;

	if (names_open(&in, data, size))
		return 0;
	if (cs_flame_new(&f)) {
		names_close(&in);
		return 0;
	}
	m.title = in.meta[0];
	m.host = in.meta[1];
	m.cmdline = in.meta[2];
	m.events = in.meta[3];
	m.deferred = size & 1;
	m.fold_single_top = size & 2;
	while (names_next(&in, &st)) {
		uint32_t ids[NAMES_MAX_FRAMES + 1];
		size_t n = 0;
		long id = cs_flame_frame(f, st.comm, NULL, CS_FLAME_OTHER);

		if (id < 0)
			break;
		ids[n++] = (uint32_t)id;
		for (size_t i = 0; i < st.nr; i++) {
			id = cs_flame_frame(f, st.frames[i].name, st.frames[i].dso,
					    st.frames[i].kernel ? CS_FLAME_KERNEL :
					    CS_FLAME_USER);
			if (id < 0)
				break;
			ids[n++] = (uint32_t)id;
		}
		if (cs_flame_add(f, ids, n, 1 + st.nr % 3))
			break;
	}
	check_page(f, &m);
	cs_flame_free(f);
	names_close(&in);
	return 0;
}
