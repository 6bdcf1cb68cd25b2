/* Tests of the bitmap pixel converter (hp_pixels.h): every pixel of every
 * config against the documented conversion written again here (Skia's
 * un-premultiply table for all 65,536 colour and alpha pairs, 565 bit
 * replication for all 65,536 words, ALPHA_8 for all 256 bytes), the
 * scanlines' filter bytes, row strides and column steps (a thumbnail's),
 * and the sizes.  Under ASan, buffers of exactly the promised sizes catch
 * any read or write past them. */
#include "check.h"

#include <stdint.h>

#include "hp_pixels.h"

/* A malloc of exactly n bytes (never 0), so that ASan sees the end. */
static uint8_t *exact(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    if (!p)
        abort();
    return p;
}

/* ((255 << 24) + a / 2) / a applied as Skia does, in 64 bits, saturated. */
static uint8_t skia_unpremultiply(unsigned c, unsigned a)
{
    uint64_t scale = ((255ull << 24) + (a >> 1)) / a;
    uint64_t v = (c * scale + (1ull << 23)) >> 24;
    return (uint8_t)(v > 255 ? 255 : v);
}

static void test_sizes(void)
{
    CHECK_EQ_U64(hp_pixel_size(HP_PIXELS_ARGB_8888), 4);
    CHECK_EQ_U64(hp_pixel_size(HP_PIXELS_RGB_565), 2);
    CHECK_EQ_U64(hp_pixel_size(HP_PIXELS_ALPHA_8), 1);
    CHECK_EQ_U64(hp_pixel_size(0), 0);
    CHECK_EQ_U64(hp_pixel_size(4), 0);
    CHECK_EQ_U64(hp_pixels_sampled(10, 1), 10);
    CHECK_EQ_U64(hp_pixels_sampled(10, 3), 4);
    CHECK_EQ_U64(hp_pixels_sampled(10, 10), 1);
    CHECK_EQ_U64(hp_pixels_sampled(10, 11), 1);
    CHECK_EQ_U64(hp_pixels_sampled(10, 0), 0);
    CHECK_EQ_U64(hp_pixels_sampled(SIZE_MAX, 2), SIZE_MAX / 2 + 1);
}

/* Every (colour, alpha) pair as one row of 65,536 pixels: R = G = B = c. */
static void test_argb_8888(void)
{
    size_t n = 65536, i, bad = 0, kept = 0;
    uint8_t *src = exact(4 * n), *dst = exact(1 + 4 * n), *plain = exact(1 + 4 * n);
    for (i = 0; i < n; i++) {
        src[4 * i] = src[4 * i + 1] = src[4 * i + 2] = (uint8_t)(i & 0xff);
        src[4 * i + 3] = (uint8_t)(i >> 8);
    }
    hp_pixels_png_rows(HP_PIXELS_ARGB_8888, 1, src, 4 * n, n, 1, 1, dst);
    hp_pixels_png_rows(HP_PIXELS_ARGB_8888, 0, src, 4 * n, n, 1, 1, plain);
    CHECK(dst[0] == 0 && plain[0] == 0);
    for (i = 0; i < n; i++) {
        unsigned c = (unsigned)(i & 0xff), a = (unsigned)(i >> 8);
        uint8_t want = (a == 0 || a == 255) ? (uint8_t)c : skia_unpremultiply(c, a);
        const uint8_t *out = dst + 1 + 4 * i;
        bad += out[0] != want || out[1] != want || out[2] != want || out[3] != a;
        kept += memcmp(plain + 1 + 4 * i, src + 4 * i, 4) == 0;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(kept, n); /* not premultiplied: the bytes as they are */
    /* Valid premultiplied colours (c <= a) come back within rounding of c * 255 / a. */
    for (i = 1, bad = 0; i < 256; i++) {
        unsigned a = (unsigned)i, c;
        for (c = 0; c <= a; c++) {
            double exact_value = c * 255.0 / a;
            uint8_t got = skia_unpremultiply(c, a);
            bad += got > exact_value + 1 || got + 1 < exact_value;
        }
    }
    CHECK_EQ_U64(bad, 0);
    free(src);
    free(dst);
    free(plain);
}

static void test_rgb_565(void)
{
    size_t n = 65536, i, bad = 0;
    uint8_t *src = exact(2 * n), *dst = exact(1 + 4 * n);
    for (i = 0; i < n; i++) {
        src[2 * i] = (uint8_t)(i & 0xff); /* little-endian words */
        src[2 * i + 1] = (uint8_t)(i >> 8);
    }
    hp_pixels_png_rows(HP_PIXELS_RGB_565, 1, src, 2 * n, n, 1, 1, dst);
    for (i = 0; i < n; i++) {
        unsigned r = (unsigned)(i >> 11), g = (unsigned)(i >> 5) & 63, b = (unsigned)i & 31;
        const uint8_t *out = dst + 1 + 4 * i;
        bad += out[0] != (uint8_t)(r << 3 | r >> 2) || out[1] != (uint8_t)(g << 2 | g >> 4) ||
               out[2] != (uint8_t)(b << 3 | b >> 2) || out[3] != 255;
    }
    CHECK_EQ_U64(bad, 0);
    /* The extremes: black, white, pure red. */
    CHECK(dst[1] == 0 && dst[2] == 0 && dst[3] == 0);
    CHECK(memcmp(dst + 1 + 4 * 0xffff, "\xff\xff\xff\xff", 4) == 0);
    CHECK(memcmp(dst + 1 + 4 * 0xf800, "\xff\x00\x00\xff", 4) == 0);
    free(src);
    free(dst);
}

static void test_alpha_8(void)
{
    uint8_t src[256], *dst = exact(1 + 4 * 256);
    size_t i, bad = 0;
    for (i = 0; i < 256; i++)
        src[i] = (uint8_t)i;
    hp_pixels_png_rows(HP_PIXELS_ALPHA_8, 1, src, 256, 256, 1, 1, dst);
    for (i = 0; i < 256; i++)
        bad += dst[1 + 4 * i] || dst[2 + 4 * i] || dst[3 + 4 * i] || dst[4 + 4 * i] != i;
    CHECK_EQ_U64(bad, 0);
    free(dst);
}

/* A thumbnail of a 7 x 5 ARGB_8888 bitmap whose pixel (x, y) is (x, y, 0, 255):
 * rows 0, 3 (stride 3 rows), columns 0, 3, 6 (step 3); the last pixel read is
 * the buffer's last but one row's last pixel, right at a buffer of exactly the
 * rows read (ASan checks nothing beyond it is touched). */
static void test_strides_and_steps(void)
{
    size_t width = 7, rows_read = 4, x, y, bad = 0;
    size_t out_width = hp_pixels_sampled(width, 3);
    uint8_t *src = exact(rows_read * width * 4), *dst = exact(2 * (1 + 4 * out_width));
    for (y = 0; y < rows_read; y++)
        for (x = 0; x < width; x++)
            memcpy(src + 4 * (y * width + x), (uint8_t[4]){ (uint8_t)x, (uint8_t)y, 0, 255 }, 4);
    hp_pixels_png_rows(HP_PIXELS_ARGB_8888, 1, src, 3 * width * 4, width, 2, 3, dst);
    CHECK_EQ_U64(out_width, 3);
    for (y = 0; y < 2; y++) {
        const uint8_t *line = dst + y * (1 + 4 * out_width);
        bad += line[0] != 0;
        for (x = 0; x < out_width; x++)
            bad += line[1 + 4 * x] != 3 * x || line[2 + 4 * x] != 3 * y || line[4 + 4 * x] != 255;
    }
    CHECK_EQ_U64(bad, 0);
    /* No rows: nothing written. */
    hp_pixels_png_rows(HP_PIXELS_RGB_565, 0, src, 0, width, 0, 1, dst);
    free(src);
    free(dst);
}

int main(void)
{
    test_sizes();
    test_argb_8888();
    test_rgb_565();
    test_alpha_8();
    test_strides_and_steps();
    return check_report("test_pixels");
}
