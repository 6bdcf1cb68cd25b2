/* libFuzzer harness for the bitmap pixel converter (hp_pixels.h).
 *
 * Input: 4 bytes of geometry (config, width, rows, step and whether to
 * un-premultiply, each taken modulo small bounds), then the pixels.  The
 * source is an allocation of exactly the bytes the geometry reads, the
 * destination of exactly the scanlines promised (rows * (1 + 4 * sampled)),
 * so any access past either is an AddressSanitizer report.  Checked besides:
 * every scanline starts with filter byte 0, an un-premultiplied pixel keeps
 * its alpha and never has a colour below the stored one (c * 255 / a >= c),
 * RGB_565 pixels are opaque and ALPHA_8 ones black. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hp_pixels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    int config, unpremultiply;
    size_t width, rows, step, pixel, row_bytes, stride, read, sampled, out_row, y, x;
    uint8_t *src, *dst;
    if (len < 4)
        return 0;
    config = 1 + data[0] % 3;
    unpremultiply = data[0] >> 7;
    width = 1 + data[1] % 64;
    rows = data[2] % 16;
    step = 1 + data[3] % 9;
    data += 4;
    len -= 4;
    pixel = hp_pixel_size(config);
    row_bytes = width * pixel;
    stride = step * row_bytes; /* a thumbnail's rows: every step-th */
    read = rows ? (rows - 1) * stride + row_bytes : 0;
    if (len < read)
        return 0;
    src = malloc(read ? read : 1);
    sampled = hp_pixels_sampled(width, step);
    out_row = 1 + 4 * sampled;
    dst = malloc(rows * out_row ? rows * out_row : 1);
    if (!src || !dst)
        abort();
    memcpy(src, data, read);
    hp_pixels_png_rows(config, unpremultiply, src, stride, width, rows, step, dst);
    for (y = 0; y < rows; y++) {
        const uint8_t *line = dst + y * out_row, *in = src + y * stride;
        if (line[0] != 0)
            abort();
        for (x = 0; x < sampled; x++) {
            const uint8_t *out = line + 1 + 4 * x, *p = in + x * step * pixel;
            if (config == HP_PIXELS_ARGB_8888 &&
                (out[3] != p[3] || out[0] < p[0] || out[1] < p[1] || out[2] < p[2] ||
                 (!unpremultiply && memcmp(out, p, 4) != 0)))
                abort();
            if (config == HP_PIXELS_RGB_565 && out[3] != 255)
                abort();
            if (config == HP_PIXELS_ALPHA_8 && (out[0] || out[1] || out[2] || out[3] != p[0]))
                abort();
        }
    }
    free(src);
    free(dst);
    return 0;
}
