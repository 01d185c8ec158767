/* What `gvs run` checks of the program before it runs it: gvs reaches a
 * program only through the dynamic loader, which loads the frontend
 * libraries from LD_LIBRARY_PATH.  A program that no loader starts, or
 * one the loader starts in secure mode, would run without a GPU. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gvs.h"

int gvs_program_find(const char *name, char *out, size_t len)
{
    struct stat st;
    if (strchr(name, '/') != NULL)
        return (size_t)snprintf(out, len, "%s", name) < len ? 0 : -1;
    /* execvp's search: an empty entry is the current directory. */
    const char *path = getenv("PATH");
    if (path == NULL)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        size_t n = strcspn(p, ":");
        int w = snprintf(out, len, "%.*s%s%s", (int)n, p, n > 0 ? "/" : "",
                         name);
        if (w > 0 && (size_t)w < len && stat(out, &st) == 0 &&
            S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        p += n;
        if (*p == '\0')
            return -1;
    }
}

enum program_kind {
    PROGRAM_UNREAD,    /* could not be read: may be anything */
    PROGRAM_OTHER,     /* not an ELF executable of this byte order */
    PROGRAM_DYNAMIC,   /* ELF, with a PT_INTERP: the loader starts it */
    PROGRAM_NO_LOADER, /* ELF, no PT_INTERP: statically linked */
};

static enum program_kind elf_kind(int fd)
{
    /* Its e_ident and e_type are Elf32's too; zeroed, a file cut short
     * reads as having no program headers. */
    Elf64_Ehdr eh = {0};
    if (pread(fd, &eh, sizeof(eh), 0) < (ssize_t)sizeof(Elf32_Ehdr))
        return PROGRAM_OTHER;
    const unsigned char data =
        __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_DATA] != data ||
        (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
        return PROGRAM_OTHER;
    uint64_t phoff;
    unsigned phnum, phentsize;
    if (eh.e_ident[EI_CLASS] == ELFCLASS64) {
        phoff = eh.e_phoff;
        phnum = eh.e_phnum;
        phentsize = eh.e_phentsize;
    } else if (eh.e_ident[EI_CLASS] == ELFCLASS32) {
        const Elf32_Ehdr *e32 = (const Elf32_Ehdr *)&eh;
        phoff = e32->e_phoff;
        phnum = e32->e_phnum;
        phentsize = e32->e_phentsize;
    } else {
        return PROGRAM_OTHER;
    }
    /* A table the kernel would not load, or one counted elsewhere
     * (PN_XNUM), is not judged. */
    if (phnum == 0 || phnum == PN_XNUM || phentsize < sizeof(Elf32_Phdr))
        return PROGRAM_DYNAMIC;
    for (unsigned i = 0; i < phnum; i++) {
        uint32_t type; /* p_type leads both Elf32_Phdr and Elf64_Phdr */
        off_t at = (off_t)(phoff + (uint64_t)i * phentsize);
        if (pread(fd, &type, sizeof(type), at) != (ssize_t)sizeof(type) ||
            type == PT_INTERP)
            return PROGRAM_DYNAMIC;
    }
    return PROGRAM_NO_LOADER;
}

/* The kernel honours a setuid or setgid bit (and the loader turns to
 * secure mode) when it changes the real user or group and the file's
 * file system does not ignore such bits; setgid needs the group's
 * execute bit too.  The bits of a script are ignored: the kernel runs
 * its interpreter as the caller. */
static const char *identity_change(const char *path, const struct stat *st)
{
    struct statvfs fs;
    if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID))
        return NULL;
    if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
        return "setuid";
    if ((st->st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
        st->st_gid != getgid())
        return "setgid";
    return NULL;
}

int gvs_program_unservable(const char *path, char *why, size_t len)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return 0;
    /* A file gvs cannot read is no script (an interpreter could not read
     * it either): a binary, whose bits count. */
    enum program_kind kind = PROGRAM_UNREAD;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        kind = elf_kind(fd);
        close(fd);
    }
    const char *id = kind != PROGRAM_OTHER ? identity_change(path, &st) : NULL;
    if (kind == PROGRAM_NO_LOADER)
        snprintf(why, len,
                 "%s is statically linked (it has no dynamic loader): gvs's "
                 "libraries cannot enter it, and it would run without a GPU",
                 path);
    else if (id != NULL)
        snprintf(why, len,
                 "%s is %s: the dynamic loader ignores LD_LIBRARY_PATH for "
                 "it, so gvs's libraries would not be loaded and it would "
                 "run without a GPU",
                 path, id);
    return kind == PROGRAM_NO_LOADER || id != NULL;
}
