/* Header parsing.  Only the four magics real producers write are accepted:
 * anything else is reported as "not an HPROF file" rather than guessed at. */
#include "hp_header.h"

#include <string.h>

static const char *const magics[] = {
    "JAVA PROFILE 1.0", "JAVA PROFILE 1.0.1", "JAVA PROFILE 1.0.2", "JAVA PROFILE 1.0.3",
};

hp_code hp_header_parse(const uint8_t *buf, size_t len, hp_header *out, hp_error *err)
{
    const size_t prefix = 16; /* "JAVA PROFILE 1.0" */
    size_t magic_len = 0, i;
    uint32_t id_size;
    int version = -1;

    /* Reject foreign data as soon as it differs from the common prefix, so a
     * gzip file or a Tailor mini fails as FORMAT, not as TRUNCATED. */
    if (memcmp(buf, magics[0], len < prefix ? len : prefix) != 0)
        return hp_fail(err, HP_E_FORMAT, 0, -1, 0, 0, len,
                       "not an HPROF file (no 'JAVA PROFILE 1.0' magic)");
    /* The NUL ends the magic at index 16, 17 or 18. */
    for (i = prefix; i < len && i < prefix + 3 && buf[i] != 0; i++)
        ;
    if (i == prefix + 3)
        return hp_fail(err, HP_E_FORMAT, 0, -1, 0, 0, len, "unknown HPROF version in header");
    if (i >= len)
        return hp_fail(err, HP_E_TRUNCATED, 0, -1, 0, i + 13, len, NULL);
    magic_len = i;
    for (i = 0; i < sizeof magics / sizeof magics[0]; i++)
        if (strlen(magics[i]) == magic_len && memcmp(buf, magics[i], magic_len) == 0)
            version = (int)i;
    if (version < 0)
        return hp_fail(err, HP_E_FORMAT, 0, -1, 0, 0, len, "unknown HPROF version in header");
    if (len < magic_len + 13)
        return hp_fail(err, HP_E_TRUNCATED, 0, -1, 0, magic_len + 13, len, NULL);
    id_size = hp_be32(buf + magic_len + 1);
    if (id_size != 4 && id_size != 8)
        return hp_fail(err, HP_E_FORMAT, magic_len + 1, -1, 0, 0, len,
                       "identifier size is neither 4 nor 8");
    out->version = version;
    out->id_size = (int)id_size;
    out->timestamp = hp_be64(buf + magic_len + 5);
    out->length = magic_len + 13;
    memcpy(out->magic, buf, magic_len);
    out->magic[magic_len] = 0;
    return HP_OK;
}

size_t hp_header_write(uint8_t *out, int version, int id_size, uint64_t timestamp)
{
    size_t n = strlen(magics[version]);
    memcpy(out, magics[version], n + 1);
    hp_put32(out + n + 1, (uint32_t)id_size);
    hp_put64(out + n + 5, timestamp);
    return n + 13;
}
