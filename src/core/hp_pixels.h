/* Android bitmap pixels as PNG scanlines.  Pure C99, no Python.
 *
 * Android 2.3 to 7.1 keep a Bitmap's pixels in a Java byte[] (mBuffer), in
 * the memory layout of its Bitmap.Config on a little-endian device: Skia's
 * N32 (ARGB_8888) as the bytes R, G, B, A, premultiplied by alpha; RGB_565
 * as a little-endian 16-bit word, red in the top 5 bits; ALPHA_8 one byte of
 * alpha.  A row holds `width` pixels, rows follow each other unpadded.
 *
 * hp_pixels_png_rows turns such rows into the scanlines of an 8-bit RGBA
 * PNG (filter byte 0, then R, G, B, A per pixel), converting as Skia does,
 * so that the image is the one Bitmap.compress(PNG) wrote on those devices:
 *  - ARGB_8888 is un-premultiplied with Skia's table (SkUnPreMultiply:
 *    scale = ((255 << 24) + a / 2) / a, c' = (c * scale + (1 << 23)) >> 24,
 *    at most 255); alpha 0 and 255 leave the colour as it is;
 *  - RGB_565 channels widen by bit replication (Skia's SkR16ToR32...:
 *    r8 = r5 << 3 | r5 >> 2, g8 = g6 << 2 | g6 >> 4), alpha 255;
 *  - ALPHA_8 is black with that alpha (what a default Paint draws). */
#ifndef HP_PIXELS_H
#define HP_PIXELS_H

#include <stddef.h>
#include <stdint.h>

typedef enum hp_pixel_config {
    HP_PIXELS_ARGB_8888 = 1,
    HP_PIXELS_RGB_565 = 2,
    HP_PIXELS_ALPHA_8 = 3
} hp_pixel_config;

/* Bytes of one pixel of `config` (4, 2, 1); 0 for a config not listed. */
size_t hp_pixel_size(int config);

/* Pixels of a PNG scanline made from `width` source pixels, taking every
 * `step`-th (a thumbnail's columns): ceil(width / step); 0 if step is 0. */
size_t hp_pixels_sampled(size_t width, size_t step);

/* Converts `rows` rows of `width` pixels of `config` into `rows` PNG
 * scanlines in `dst` (rows * (1 + 4 * hp_pixels_sampled(width, step))
 * bytes).  Row i starts at src + i * stride (a thumbnail's rows skip
 * some: stride is then a multiple of the row's bytes); each scanline takes
 * the pixels 0, step, 2 * step... of its row.  `unpremultiply` (ARGB_8888
 * only): the pixels are premultiplied, as Android stores them unless
 * Bitmap.setPremultiplied(false) was called.  The caller checks that config
 * is known, step at least 1 and the bytes read and written in bounds. */
void hp_pixels_png_rows(int config, int unpremultiply, const uint8_t *src, size_t stride, size_t width,
                        size_t rows, size_t step, uint8_t *dst);

#endif
