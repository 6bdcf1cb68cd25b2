/* Valid UTF-8 out of a dump's names and strings (hp_utf8.h). */
#include "hp_utf8.h"

#include <string.h>

/* The length of the well-formed sequence starting at in[0] (1 to 4), or,
 * when there is none, minus the length of its maximal ill-formed prefix
 * (-1 to -3): a lead byte and the continuation bytes that still fitted. */
static int sequence(const uint8_t *in, size_t len)
{
    uint8_t b = in[0], lo = 0x80, hi = 0xBF;
    int need, k;
    if (b < 0x80)
        return 1;
    if (b >= 0xC2 && b <= 0xDF)
        need = 2;
    else if (b >= 0xE0 && b <= 0xEF)
        need = 3;
    else if (b >= 0xF0 && b <= 0xF4)
        need = 4;
    else
        return -1; /* a continuation byte or C0, C1, F5..FF: never a lead */
    if (b == 0xE0)
        lo = 0xA0; /* no overlong forms */
    else if (b == 0xED)
        hi = 0x9F; /* no surrogates */
    else if (b == 0xF0)
        lo = 0x90;
    else if (b == 0xF4)
        hi = 0x8F; /* nothing past U+10FFFF */
    for (k = 1; k < need; k++) {
        if ((size_t)k >= len || in[k] < lo || in[k] > hi)
            return -k;
        lo = 0x80;
        hi = 0xBF;
    }
    return need;
}

size_t hp_utf8_valid_prefix(const uint8_t *in, size_t len)
{
    size_t i = 0;
    while (i < len) {
        int n;
        if (in[i] < 0x80) {
            i++;
            continue;
        }
        n = sequence(in + i, len - i);
        if (n < 0)
            break;
        i += (size_t)n;
    }
    return i;
}

static size_t put_replacement(uint8_t *out)
{
    out[0] = 0xEF;
    out[1] = 0xBF;
    out[2] = 0xBD;
    return 3;
}

size_t hp_utf8_repair(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t i = 0, n = 0;
    while (i < len) {
        size_t valid = hp_utf8_valid_prefix(in + i, len - i);
        int bad;
        memmove(out + n, in + i, valid); /* hp_name_utf8 repairs in place */
        n += valid;
        i += valid;
        if (i == len)
            break;
        bad = -sequence(in + i, len - i);
        n += put_replacement(out + n);
        i += (size_t)bad;
    }
    return n;
}

size_t hp_name_utf8(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t n;
    if (hp_utf8_valid_prefix(in, len) == len) {
        memcpy(out, in, len);
        return len;
    }
    /* Converted in place at the end of `out` (which the repair then reads
     * ahead of where it writes: the text never grows by more than 3x). */
    n = hp_mutf8_to_utf8(in, len, out + 2 * len);
    return hp_utf8_repair(out + 2 * len, n, out);
}

static size_t put_code_point(uint32_t c, uint8_t *out)
{
    if (c < 0x80) {
        out[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (uint8_t)(0xC0 | c >> 6);
        out[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (uint8_t)(0xE0 | c >> 12);
        out[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | c >> 18);
    out[1] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

static uint32_t unit_at(const hp_text *t, size_t i)
{
    const uint8_t *p = t->data + 2 * i;
    return t->encoding == HP_TEXT_UTF16LE ? (uint32_t)(p[0] | p[1] << 8) : (uint32_t)(p[0] << 8 | p[1]);
}

size_t hp_text_utf8(const hp_text *t, size_t max_units, uint8_t *out)
{
    size_t units = t->units < max_units ? t->units : max_units, i, n = 0;
    if (t->encoding == HP_TEXT_LATIN1) {
        for (i = 0; i < units; i++) {
            uint8_t b = t->data[i];
            if (b < 0x80) {
                out[n++] = b; /* most text: ASCII */
            } else {
                out[n++] = (uint8_t)(0xC0 | b >> 6);
                out[n++] = (uint8_t)(0x80 | (b & 0x3F));
            }
        }
        return n;
    }
    for (i = 0; i < units; i++) {
        uint32_t c = unit_at(t, i);
        if (c >= 0xD800 && c < 0xDC00 && i + 1 < units) {
            uint32_t low = unit_at(t, i + 1);
            if (low >= 0xDC00 && low < 0xE000) {
                n += put_code_point(0x10000u + ((c - 0xD800u) << 10) + (low - 0xDC00u), out + n);
                i++;
                continue;
            }
        }
        n += c >= 0xD800 && c < 0xE000 ? put_replacement(out + n) : put_code_point(c, out + n);
    }
    return n;
}
