/* json.h - writing JSON values, for the outputs that write JSON (the flame
 * graph page's data, speedscope files).
 */
#ifndef CS_JSON_H
#define CS_JSON_H

#include <stdint.h>
#include <stdio.h>

/* s as a JSON string, quotes included; NULL is "". Safe inside an HTML
 * <script> too ('<' is escaped); bytes that are not UTF-8 become U+FFFD
 * (symbol names are bytes, JSON is text). */
void cs_json_str(FILE *out, const char *s);

/* v in decimal. */
void cs_json_u64(FILE *out, uint64_t v);

#endif
