/* libFuzzer harness for the decoding of HPROF names (hp_common.h):
 * hp_java_name (a class name as a dump writes it -> its Java name) and
 * hp_mutf8_to_utf8 (Java's modified UTF-8 -> UTF-8 for a replacing decoder).
 *
 * Input: the name's bytes.  Each output goes to an allocation of exactly
 * the size the API promises is enough (HP_JAVA_NAME_MAX(len), len), so a
 * write past it is an AddressSanitizer report.  Checked besides: the
 * lengths returned stay within those sizes; a Java name has no '/'; a name
 * that does not start with '[' only has its '/' made '.', and an array name
 * either ends with one "[]" per leading '[' or is the name with '/' made '.'
 * (not a descriptor after all); bytes that are neither C0 nor ED (no NUL
 * pair, no surrogate) come out of hp_mutf8_to_utf8 as they are. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hp_common.h"

static int dotted(const uint8_t *name, size_t len, const uint8_t *out, size_t n)
{
    size_t i;
    if (n != len)
        return 0;
    for (i = 0; i < len; i++)
        if (out[i] != (name[i] == '/' ? '.' : name[i]))
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    uint8_t *java = malloc(HP_JAVA_NAME_MAX(len)), *utf8 = malloc(len ? len : 1);
    size_t n, i, depth = 0;
    int plain = 1;
    if (!java || !utf8)
        abort();
    n = hp_java_name(data, len, java);
    if (n > HP_JAVA_NAME_MAX(len) || (n && memchr(java, '/', n)))
        abort();
    while (depth < len && data[depth] == '[')
        depth++;
    if (depth == 0 && !dotted(data, len, java, n))
        abort();
    if (depth > 0 && !dotted(data, len, java, n)) {
        if (n < 2 * depth)
            abort();
        for (i = 0; i < depth; i++)
            if (java[n - 2 * depth + 2 * i] != '[' || java[n - 2 * depth + 2 * i + 1] != ']')
                abort();
    }
    n = hp_mutf8_to_utf8(data, len, utf8);
    if (n > len)
        abort();
    for (i = 0; i < len; i++)
        plain &= data[i] != 0xC0 && data[i] != 0xED;
    if (plain && (n != len || (len && memcmp(utf8, data, len) != 0)))
        abort();
    free(java);
    free(utf8);
    return 0;
}
