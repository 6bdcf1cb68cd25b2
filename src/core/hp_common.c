/* Tag names, error formatting and Java class names. */
#include "hp_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const hp_alloc hp_default_alloc = { malloc, realloc, free };

const char *hp_tag_name(int tag)
{
    switch (tag) {
    case HP_TAG_UTF8: return "STRING";
    case HP_TAG_LOAD_CLASS: return "LOAD_CLASS";
    case HP_TAG_UNLOAD_CLASS: return "UNLOAD_CLASS";
    case HP_TAG_FRAME: return "STACK_FRAME";
    case HP_TAG_TRACE: return "STACK_TRACE";
    case HP_TAG_ALLOC_SITES: return "ALLOC_SITES";
    case HP_TAG_HEAP_SUMMARY: return "HEAP_SUMMARY";
    case HP_TAG_START_THREAD: return "START_THREAD";
    case HP_TAG_END_THREAD: return "END_THREAD";
    case HP_TAG_HEAP_DUMP: return "HEAP_DUMP";
    case HP_TAG_CPU_SAMPLES: return "CPU_SAMPLES";
    case HP_TAG_CONTROL_SETTINGS: return "CONTROL_SETTINGS";
    case HP_TAG_HEAP_DUMP_SEGMENT: return "HEAP_DUMP_SEGMENT";
    case HP_TAG_HEAP_DUMP_END: return "HEAP_DUMP_END";
    default: return NULL;
    }
}

const char *hp_subtag_name(int subtag)
{
    switch (subtag) {
    case HP_SUB_ROOT_UNKNOWN: return "ROOT_UNKNOWN";
    case HP_SUB_ROOT_JNI_GLOBAL: return "ROOT_JNI_GLOBAL";
    case HP_SUB_ROOT_JNI_LOCAL: return "ROOT_JNI_LOCAL";
    case HP_SUB_ROOT_JAVA_FRAME: return "ROOT_JAVA_FRAME";
    case HP_SUB_ROOT_NATIVE_STACK: return "ROOT_NATIVE_STACK";
    case HP_SUB_ROOT_STICKY_CLASS: return "ROOT_STICKY_CLASS";
    case HP_SUB_ROOT_THREAD_BLOCK: return "ROOT_THREAD_BLOCK";
    case HP_SUB_ROOT_MONITOR_USED: return "ROOT_MONITOR_USED";
    case HP_SUB_ROOT_THREAD_OBJECT: return "ROOT_THREAD_OBJECT";
    case HP_SUB_CLASS_DUMP: return "CLASS_DUMP";
    case HP_SUB_INSTANCE_DUMP: return "INSTANCE_DUMP";
    case HP_SUB_OBJ_ARRAY_DUMP: return "OBJECT_ARRAY_DUMP";
    case HP_SUB_PRIM_ARRAY_DUMP: return "PRIMITIVE_ARRAY_DUMP";
    case HP_SUB_ROOT_INTERNED_STRING: return "ROOT_INTERNED_STRING";
    case HP_SUB_ROOT_FINALIZING: return "ROOT_FINALIZING";
    case HP_SUB_ROOT_DEBUGGER: return "ROOT_DEBUGGER";
    case HP_SUB_ROOT_REFERENCE_CLEANUP: return "ROOT_REFERENCE_CLEANUP";
    case HP_SUB_ROOT_VM_INTERNAL: return "ROOT_VM_INTERNAL";
    case HP_SUB_ROOT_JNI_MONITOR: return "ROOT_JNI_MONITOR";
    case HP_SUB_UNREACHABLE: return "UNREACHABLE";
    case HP_SUB_PRIM_ARRAY_NODATA: return "PRIMITIVE_ARRAY_NODATA";
    case HP_SUB_HEAP_DUMP_INFO: return "HEAP_DUMP_INFO";
    default: return NULL;
    }
}

hp_code hp_fail(hp_error *err, hp_code code, uint64_t offset, int tag, int is_sub,
                uint64_t need, uint64_t have, const char *detail)
{
    err->code = code;
    err->offset = offset;
    err->tag = tag;
    err->is_sub = is_sub;
    err->need = need;
    err->have = have;
    err->detail = detail;
    err->text[0] = '\0';
    return code;
}

hp_code hp_failf(hp_error *err, hp_code code, uint64_t offset, int tag, int is_sub, const char *fmt, ...)
{
    va_list args;
    hp_fail(err, code, offset, tag, is_sub, 0, 0, NULL);
    va_start(args, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, args);
    va_end(args);
    return code;
}

/* The unit an error is about: "header", a known name, or "sub-record 0x99". */
static void unit_name(const hp_error *err, char *buf, size_t size)
{
    const char *name;
    if (err->tag < 0) {
        snprintf(buf, size, "header");
        return;
    }
    name = err->is_sub ? hp_subtag_name(err->tag) : hp_tag_name(err->tag);
    if (name)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "%s 0x%02X", err->is_sub ? "sub-record" : "record", err->tag);
}

size_t hp_error_format(const hp_error *err, char *buf, size_t size)
{
    char unit[48];
    int n;
    unsigned long long off = (unsigned long long)err->offset;

    if (size == 0)
        return 0;
    if (err->text[0]) {
        n = snprintf(buf, size, "%s", err->text);
        return (size_t)n < size ? (size_t)n : size - 1;
    }
    unit_name(err, unit, sizeof unit);
    if (err->code == HP_E_ABORTED)
        n = snprintf(buf, size, "%s", err->detail ? err->detail : "stopped by the caller");
    else if (err->tag == HP_TAG_VERTEX && err->offset == UINT64_MAX)
        n = snprintf(buf, size, "%s", err->detail ? err->detail : "error");
    else if (err->tag == HP_TAG_VERTEX)
        n = snprintf(buf, size, "%s at vertex %llu", err->detail ? err->detail : "error", off);
    else switch (err->code) {
    case HP_E_TRUNCATED:
        n = snprintf(buf, size, "truncated %s at offset %llu (0x%llx): needs %llu bytes, %llu remain",
                     unit, off, off, (unsigned long long)err->need, (unsigned long long)err->have);
        break;
    case HP_E_OVERRUN:
        n = snprintf(buf, size, "%s at offset %llu (0x%llx) runs past the end of its heap-dump record: "
                     "needs %llu bytes, %llu remain", unit, off, off,
                     (unsigned long long)err->need, (unsigned long long)err->have);
        break;
    default:
        n = snprintf(buf, size, "%s in %s at offset %llu (0x%llx)",
                     err->detail ? err->detail : "error", unit, off, off);
        break;
    }
    if (n < 0)
        n = 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

int hp_java_name_equals(const uint8_t *name, size_t len, const char *want, size_t want_len)
{
    /* JVM names: "java/lang/String", arrays "[B" / "[Ljava/lang/String;";
     * ART names: Java names as they are. */
    static const char *const prims[][2] = {
        { "[Z", "boolean[]" }, { "[C", "char[]" }, { "[F", "float[]" }, { "[D", "double[]" },
        { "[B", "byte[]" }, { "[S", "short[]" }, { "[I", "int[]" }, { "[J", "long[]" },
    };
    size_t i;
    if (len > 0 && name[0] == '[') {
        size_t depth = 0, elen, base_len;
        const uint8_t *elem;
        for (i = 0; i < 8; i++)
            if (len == 2 && memcmp(name, prims[i][0], 2) == 0)
                return strlen(prims[i][1]) == want_len && memcmp(prims[i][1], want, want_len) == 0;
        while (depth < len && name[depth] == '[')
            depth++;
        elem = name + depth;
        elen = len - depth;
        if (elen >= 2 && elem[0] == 'L' && elem[elen - 1] == ';') {
            elem++;
            elen -= 2;
        } else if (elen == 1) {
            for (i = 0; i < 8; i++)
                if (prims[i][0][1] == (char)elem[0])
                    break;
            if (i == 8)
                return 0;
            base_len = strlen(prims[i][1]) - 2;
            if (want_len != base_len + 2 * depth || memcmp(prims[i][1], want, base_len) != 0)
                return 0;
            for (i = 0; i < depth; i++)
                if (want[base_len + 2 * i] != '[' || want[base_len + 2 * i + 1] != ']')
                    return 0;
            return 1;
        } else {
            return 0;
        }
        if (want_len != elen + 2 * depth)
            return 0;
        for (i = 0; i < elen; i++)
            if ((elem[i] == '/' ? '.' : (char)elem[i]) != want[i])
                return 0;
        for (i = 0; i < depth; i++)
            if (want[elen + 2 * i] != '[' || want[elen + 2 * i + 1] != ']')
                return 0;
        return 1;
    }
    if (len != want_len)
        return 0;
    for (i = 0; i < len; i++)
        if ((name[i] == '/' ? '.' : (char)name[i]) != want[i])
            return 0;
    return 1;
}

size_t hp_java_name(const uint8_t *name, size_t len, uint8_t *out)
{
    static const char letters[] = "ZCFDBSIJ";
    static const char *const prims[] = { "boolean", "char", "float", "double", "byte", "short", "int", "long" };
    size_t depth = 0, n = 0, i, start, end;
    while (depth < len && name[depth] == '[')
        depth++;
    start = depth;
    end = len;
    if (depth > 0) {
        const char *letter = len - depth == 1 && name[depth] ? strchr(letters, name[depth]) : NULL;
        if (letter) {
            const char *base = prims[letter - letters];
            n = strlen(base);
            memcpy(out, base, n);
            goto dims;
        }
        if (len - depth >= 2 && name[depth] == 'L' && name[len - 1] == ';') {
            start++;
            end--;
        } else {
            start = 0;      /* not a descriptor after all: the name as it is */
            depth = 0;
        }
    }
    for (i = start; i < end; i++)
        out[n++] = name[i] == '/' ? '.' : name[i];
dims:
    for (i = 0; i < depth; i++) {
        out[n++] = '[';
        out[n++] = ']';
    }
    return n;
}

static int is_cont(uint8_t b) { return (b & 0xC0) == 0x80; }

size_t hp_mutf8_to_utf8(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t i = 0, n = 0;
    while (i < len) {
        if (in[i] == 0xC0 && i + 1 < len && in[i + 1] == 0x80) {
            out[n++] = 0;
            i += 2;
        } else if (in[i] == 0xED && i + 2 < len && in[i + 1] >= 0xA0 && in[i + 1] <= 0xBF && is_cont(in[i + 2])) {
            /* A surrogate, written as a 3-byte sequence (UTF-8 forbids them). */
            uint32_t hi = 0xD000u | (uint32_t)(in[i + 1] & 0x3F) << 6 | (in[i + 2] & 0x3F);
            if (hi < 0xDC00 && i + 5 < len && in[i + 3] == 0xED && in[i + 4] >= 0xB0 && in[i + 4] <= 0xBF &&
                is_cont(in[i + 5])) {
                uint32_t lo = 0xD000u | (uint32_t)(in[i + 4] & 0x3F) << 6 | (in[i + 5] & 0x3F);
                uint32_t c = 0x10000u + ((hi - 0xD800u) << 10) + (lo - 0xDC00u);
                out[n++] = (uint8_t)(0xF0 | c >> 18);
                out[n++] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
                out[n++] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
                out[n++] = (uint8_t)(0x80 | (c & 0x3F));
                i += 6;
            } else {
                out[n++] = 0xEF; /* U+FFFD */
                out[n++] = 0xBF;
                out[n++] = 0xBD;
                i += 3;
            }
        } else {
            out[n++] = in[i++];
        }
    }
    return n;
}

size_t hp_unnamed(char *buf, hp_unnamed_kind kind, uint64_t id)
{
    int n;
    switch (kind) {
    case HP_UNNAMED_CLASS: n = snprintf(buf, HP_UNNAMED_MAX, "<unnamed class 0x%llx>", (unsigned long long)id); break;
    case HP_UNNAMED_FIELD: n = snprintf(buf, HP_UNNAMED_MAX, "<unnamed field #%llu>", (unsigned long long)id); break;
    case HP_UNNAMED_STATIC: n = snprintf(buf, HP_UNNAMED_MAX, "<unnamed static #%llu>", (unsigned long long)id); break;
    default: n = snprintf(buf, HP_UNNAMED_MAX, "<unnamed method>"); break;
    }
    return n < 0 ? 0 : (size_t)n;
}

uint64_t hp_restore_limit(uint64_t max_output, uint64_t input)
{
    if (max_output)
        return max_output;
    if (input > (UINT64_MAX - 1) / HP_RESTORE_RATIO)
        return UINT64_MAX;
    return input * HP_RESTORE_RATIO > HP_RESTORE_FLOOR ? input * HP_RESTORE_RATIO : HP_RESTORE_FLOOR;
}

hp_code hp_restore_refuse(hp_error *err, uint64_t declared, uint64_t limit, const char *what, uint64_t offset,
                          int tag, int is_sub)
{
    int gib = declared >= (uint64_t)1 << 30;
    /* hp_error holds 192 bytes of text: the rule itself is in the docs. */
    return hp_failf(err, HP_E_TOO_LARGE, offset, tag, is_sub,
                    "%s at offset %llu: the restored dump would hold %llu bytes (%.1f %s), over the %llu limit "
                    "(--max-output, max_output= raise it)",
                    what, (unsigned long long)offset, (unsigned long long)declared,
                    (double)declared / (double)((uint64_t)1 << (gib ? 30 : 20)), gib ? "GiB" : "MiB",
                    (unsigned long long)limit);
}
