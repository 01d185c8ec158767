/*
 * Shared mappings placed away from where a CUDA driver puts its memory.
 *
 * A client shadows managed memory and maps page-locked memory at the
 * addresses the driver in gvsd's worker chose (docs/cudart.md, "Managed
 * memory").  That driver allocates top-down in the worker's mmap area,
 * just as the kernel places a client's own mappings in the client's: a
 * 16 GiB ivshmem region mapped there took the address of a managed
 * allocation in two of about a dozen GPU-label runs
 * (cudaErrorMemoryAllocation).
 * gvs's own large mappings go bottom-up from GVS_FARMAP_BASE instead,
 * which neither the driver nor the kernel's default placement reaches.
 */
#ifndef GVS_FARMAP_H
#define GVS_FARMAP_H

#include <stddef.h>
#include <sys/types.h>

/* 32 TiB: above the driver's fixed reservations (below 1.1 TiB on
 * driver 580), below a program's heap and libraries (from 85 TiB up on
 * x86-64 and AArch64 with 47- or 48-bit addresses). */
#define GVS_FARMAP_BASE ((unsigned long long)1 << 45)

/* As mmap(NULL, len, prot, flags, fd, off), MAP_FIXED excluded: the same
 * result and errno.  Placed from GVS_FARMAP_BASE up where the kernel
 * allows it; where it does not (a smaller address space, the range
 * taken), wherever the kernel puts it. */
void *gvs_mmap_far(size_t len, int prot, int flags, int fd, off_t off);

#endif
