/* Android bitmap pixels as PNG scanlines (hp_pixels.h). */
#include "hp_pixels.h"

size_t hp_pixel_size(int config)
{
    switch (config) {
    case HP_PIXELS_ARGB_8888: return 4;
    case HP_PIXELS_RGB_565: return 2;
    case HP_PIXELS_ALPHA_8: return 1;
    default: return 0;
    }
}

size_t hp_pixels_sampled(size_t width, size_t step)
{
    return step ? width / step + (width % step != 0) : 0;
}

/* Skia's SkUnPreMultiply scale of alpha a (1 to 254): 255 / a in 8.24 fixed point. */
static uint32_t unpremultiply_scale(uint32_t a)
{
    return ((255u << 24) + (a >> 1)) / a;
}

static uint8_t unpremultiplied(uint32_t scale, uint32_t c)
{
    /* Skia computes this in 32 bits, exact while c <= a; a colour above its
     * alpha is no valid premultiplied pixel: here it saturates, never wraps. */
    uint64_t v = ((uint64_t)c * scale + (1u << 23)) >> 24;
    return (uint8_t)(v > 255 ? 255 : v);
}

/* The rows below index their pixels (p = src + i * step * size) rather than
 * advance a pointer, which would point past the buffer after a thumbnail's
 * last sampled pixel. */
static void argb_8888_row(int unpremultiply, const uint8_t *src, size_t count, size_t step, uint8_t *out)
{
    size_t i;
    for (i = 0; i < count; i++, out += 4) {
        const uint8_t *p = src + i * step * 4;
        uint32_t a = p[3];
        if (unpremultiply && a != 0 && a != 255) {
            uint32_t scale = unpremultiply_scale(a);
            out[0] = unpremultiplied(scale, p[0]);
            out[1] = unpremultiplied(scale, p[1]);
            out[2] = unpremultiplied(scale, p[2]);
        } else {
            out[0] = p[0];
            out[1] = p[1];
            out[2] = p[2];
        }
        out[3] = (uint8_t)a;
    }
}

static void rgb_565_row(const uint8_t *src, size_t count, size_t step, uint8_t *out)
{
    size_t i;
    for (i = 0; i < count; i++, out += 4) {
        const uint8_t *p = src + i * step * 2;
        uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8;
        uint32_t r = v >> 11, g = (v >> 5) & 0x3f, b = v & 0x1f;
        out[0] = (uint8_t)(r << 3 | r >> 2);
        out[1] = (uint8_t)(g << 2 | g >> 4);
        out[2] = (uint8_t)(b << 3 | b >> 2);
        out[3] = 255;
    }
}

static void alpha_8_row(const uint8_t *src, size_t count, size_t step, uint8_t *out)
{
    size_t i;
    for (i = 0; i < count; i++, out += 4) {
        out[0] = out[1] = out[2] = 0;
        out[3] = src[i * step];
    }
}

void hp_pixels_png_rows(int config, int unpremultiply, const uint8_t *src, size_t stride, size_t width,
                        size_t rows, size_t step, uint8_t *dst)
{
    size_t count = hp_pixels_sampled(width, step), y;
    for (y = 0; y < rows; y++) {
        const uint8_t *row = src + y * stride; /* never a pointer past the last row */
        *dst++ = 0;                            /* filter type None */
        switch (config) {
        case HP_PIXELS_ARGB_8888: argb_8888_row(unpremultiply, row, count, step, dst); break;
        case HP_PIXELS_RGB_565: rgb_565_row(row, count, step, dst); break;
        case HP_PIXELS_ALPHA_8: alpha_8_row(row, count, step, dst); break;
        default: break;
        }
        dst += 4 * count;
    }
}
