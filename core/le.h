/*
 * Little-endian encoding, whatever the host's byte order: on a
 * little-endian host one copy of the bytes (a single move once n is a
 * constant, as in buf.c's getters and putters), elsewhere byte by byte.
 * Internal to gvs_core.
 */
#ifndef GVS_LE_H
#define GVS_LE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GVS_LE_HOST 1
#else
#define GVS_LE_HOST 0
#endif

/* Stores the n low bytes of v at p, least significant first (n <= 8). */
static inline void gvs_le_store(uint8_t *p, uint64_t v, size_t n)
{
    if (GVS_LE_HOST) {
        memcpy(p, &v, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Loads an n-byte little-endian unsigned integer (n <= 8). */
static inline uint64_t gvs_le_load(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    if (GVS_LE_HOST) {
        memcpy(&v, p, n);
        return v;
    }
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
