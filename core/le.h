/*
 * Little-endian encoding, byte by byte, whatever the host's byte order.
 * Internal to gvs_core.
 */
#ifndef GVS_LE_H
#define GVS_LE_H

#include <stddef.h>
#include <stdint.h>

/* Stores the n low bytes of v at p, least significant first. */
static inline void gvs_le_store(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Loads an n-byte little-endian unsigned integer (n <= 8). */
static inline uint64_t gvs_le_load(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif
