/* Texture descriptions on the wire for both halves (texture_wire.h). */
#include "texture_wire.h"

#include <string.h>

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

void cudart_wire_put_channel(struct apigen_call *c,
                             const struct cudaChannelFormatDesc *d)
{
    apigen_put_i32(c, d->x);
    apigen_put_i32(c, d->y);
    apigen_put_i32(c, d->z);
    apigen_put_i32(c, d->w);
    apigen_put_i32(c, d->f);
}

void cudart_wire_get_channel(struct apigen_call *c,
                             struct cudaChannelFormatDesc *d)
{
    int32_t f;
    apigen_get_i32(c, &d->x);
    apigen_get_i32(c, &d->y);
    apigen_get_i32(c, &d->z);
    apigen_get_i32(c, &d->w);
    apigen_get_i32(c, &f);
    d->f = (enum cudaChannelFormatKind)f;
}

void cudart_wire_put_texture(struct apigen_call *c,
                             const struct cudaTextureDesc *t)
{
    for (int i = 0; i < 3; i++)
        apigen_put_i32(c, t->addressMode[i]);
    apigen_put_i32(c, t->filterMode);
    apigen_put_i32(c, t->readMode);
    apigen_put_i32(c, t->sRGB);
    for (int i = 0; i < 4; i++)
        apigen_put_u32(c, float_bits(t->borderColor[i]));
    apigen_put_i32(c, t->normalizedCoords);
    apigen_put_u32(c, t->maxAnisotropy);
    apigen_put_i32(c, t->mipmapFilterMode);
    apigen_put_u32(c, float_bits(t->mipmapLevelBias));
    apigen_put_u32(c, float_bits(t->minMipmapLevelClamp));
    apigen_put_u32(c, float_bits(t->maxMipmapLevelClamp));
    apigen_put_i32(c, t->disableTrilinearOptimization);
    apigen_put_i32(c, t->seamlessCubemap);
}

void cudart_wire_get_texture(struct apigen_call *c,
                             struct cudaTextureDesc *t)
{
    int32_t v;
    uint32_t u;
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < 3; i++) {
        apigen_get_i32(c, &v);
        t->addressMode[i] = (enum cudaTextureAddressMode)v;
    }
    apigen_get_i32(c, &v);
    t->filterMode = (enum cudaTextureFilterMode)v;
    apigen_get_i32(c, &v);
    t->readMode = (enum cudaTextureReadMode)v;
    apigen_get_i32(c, &t->sRGB);
    for (int i = 0; i < 4; i++) {
        apigen_get_u32(c, &u);
        t->borderColor[i] = bits_float(u);
    }
    apigen_get_i32(c, &t->normalizedCoords);
    apigen_get_u32(c, &t->maxAnisotropy);
    apigen_get_i32(c, &v);
    t->mipmapFilterMode = (enum cudaTextureFilterMode)v;
    apigen_get_u32(c, &u);
    t->mipmapLevelBias = bits_float(u);
    apigen_get_u32(c, &u);
    t->minMipmapLevelClamp = bits_float(u);
    apigen_get_u32(c, &u);
    t->maxMipmapLevelClamp = bits_float(u);
    apigen_get_i32(c, &t->disableTrilinearOptimization);
    apigen_get_i32(c, &t->seamlessCubemap);
}

void cudart_wire_put_view(struct apigen_call *c,
                          const struct cudaResourceViewDesc *v)
{
    apigen_put_i32(c, v->format);
    apigen_put_u64(c, v->width);
    apigen_put_u64(c, v->height);
    apigen_put_u64(c, v->depth);
    apigen_put_u32(c, v->firstMipmapLevel);
    apigen_put_u32(c, v->lastMipmapLevel);
    apigen_put_u32(c, v->firstLayer);
    apigen_put_u32(c, v->lastLayer);
}

void cudart_wire_get_view(struct apigen_call *c,
                          struct cudaResourceViewDesc *v)
{
    int32_t f;
    uint64_t w, h, d;
    memset(v, 0, sizeof(*v));
    apigen_get_i32(c, &f);
    apigen_get_u64(c, &w);
    apigen_get_u64(c, &h);
    apigen_get_u64(c, &d);
    apigen_get_u32(c, &v->firstMipmapLevel);
    apigen_get_u32(c, &v->lastMipmapLevel);
    apigen_get_u32(c, &v->firstLayer);
    apigen_get_u32(c, &v->lastLayer);
    v->format = (enum cudaResourceViewFormat)f;
    v->width = (size_t)w;
    v->height = (size_t)h;
    v->depth = (size_t)d;
}
