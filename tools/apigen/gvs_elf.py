"""The parts of ELF64 that gvs's build scripts read: a shared library's
dynamic symbols with their versions, and a relocatable object's symbols,
sections and relocations.  Standard library only, so that the build needs
no binutils of a particular version.
"""

import struct

SHN_UNDEF = 0
SHN_ABS = 0xFFF1
SHT_SYMTAB = 2
SHT_RELA = 4
SHT_DYNAMIC = 6
SHT_REL = 9
SHT_DYNSYM = 11
SHT_GNU_VERDEF = 0x6FFFFFFD
SHT_GNU_VERSYM = 0x6FFFFFFF
STB_LOCAL = 0
STT_FUNC = 2
STT_GNU_IFUNC = 10
DT_NULL = 0
DT_SONAME = 14
# Version indexes 0 and 1 mean "local" and "global, unversioned".
VER_NDX_GLOBAL = 1


class ElfError(Exception):
    pass


class Symbol:
    __slots__ = ("name", "bind", "type", "shndx", "value", "size", "version")

    def __init__(self, name, info, shndx, value, size):
        self.name = name
        self.bind = info >> 4
        self.type = info & 0xF
        self.shndx = shndx
        self.value = value
        self.size = size
        self.version = ""

    @property
    def defined(self):
        return self.shndx != SHN_UNDEF

    @property
    def is_function(self):
        return self.type in (STT_FUNC, STT_GNU_IFUNC)


class Section:
    __slots__ = ("name", "type", "offset", "size", "link", "info")


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF":
            raise ElfError("%s: not an ELF file" % path)
        if d[4] != 2:
            raise ElfError("%s: not a 64-bit ELF file" % path)
        self.end = "<" if d[5] == 1 else ">"
        (shoff,) = self._unpack("Q", 0x28)
        shentsize, shnum, shstrndx = self._unpack("HHH", 0x3A)
        self.sections = []
        for i in range(shnum):
            s = Section()
            (s.name, s.type, _flags, _addr, s.offset, s.size, s.link, s.info,
             _align, _entsize) = self._unpack("IIQQQQIIQQ", shoff + i * shentsize)
            self.sections.append(s)
        names = self.sections[shstrndx]
        for s in self.sections:
            s.name = self._str(names, s.name)

    def _unpack(self, fmt, off):
        return struct.unpack_from(self.end + fmt, self.data, off)

    def _str(self, strtab, off):
        start = strtab.offset + off
        return self.data[start:self.data.index(b"\0", start)].decode("ascii")

    def _first(self, sh_type):
        for s in self.sections:
            if s.type == sh_type:
                return s
        return None

    def _symbols(self, tab):
        strtab = self.sections[tab.link]
        syms = []
        for off in range(tab.offset, tab.offset + tab.size, 24):
            name, info, _other, shndx, value, size = self._unpack("IBBHQQ", off)
            syms.append(Symbol(self._str(strtab, name), info, shndx, value, size))
        return syms

    def soname(self):
        dyn = self._first(SHT_DYNAMIC)
        if dyn is not None:
            for off in range(dyn.offset, dyn.offset + dyn.size, 16):
                tag, val = self._unpack("QQ", off)
                if tag == DT_NULL:
                    break
                if tag == DT_SONAME:
                    return self._str(self.sections[dyn.link], val)
        raise ElfError("%s: no DT_SONAME" % self.path)

    def dynamic_symbols(self):
        """The dynamic symbol table, each symbol with its version name
        ("" when unversioned)."""
        tab = self._first(SHT_DYNSYM)
        if tab is None:
            raise ElfError("%s: no dynamic symbol table" % self.path)
        syms = self._symbols(tab)
        versym, verdef = self._first(SHT_GNU_VERSYM), self._first(SHT_GNU_VERDEF)
        if versym is not None and verdef is not None:
            names = self._version_names(verdef)
            for i, sym in enumerate(syms):
                (ndx,) = self._unpack("H", versym.offset + 2 * i)
                ndx &= 0x7FFF  # the high bit only hides a non-default version
                if ndx > VER_NDX_GLOBAL:
                    sym.version = names.get(ndx, "")
        return syms

    def _version_names(self, verdef):
        strtab = self.sections[verdef.link]
        names = {}
        off = verdef.offset
        for _ in range(verdef.info):  # sh_info: number of definitions
            _ver, _flags, ndx, _cnt, _hash, aux, nxt = self._unpack("HHHHIII", off)
            (name, _next) = self._unpack("II", off + aux)
            names[ndx] = self._str(strtab, name)
            off += nxt
        return names

    def exported_functions(self):
        """{name: version} of the functions a shared library defines and
        exports.  Data symbols are reported as an error: they cannot be
        stood in for by a function."""
        out = {}
        for sym in self.dynamic_symbols():
            if not sym.defined or sym.bind == STB_LOCAL:
                continue
            if sym.shndx == SHN_ABS and sym.name == sym.version:
                continue  # the definition of the version node itself
            if not sym.is_function:
                raise ElfError("%s exports %s, which is not a function"
                               % (self.path, sym.name))
            out[sym.name] = sym.version
        return out

    def symtab(self):
        """The static symbol table of a relocatable object."""
        tab = self._first(SHT_SYMTAB)
        return [] if tab is None else self._symbols(tab)

    def relocations(self):
        """(relocated section index, symbol index) of every relocation of a
        relocatable object."""
        out = []
        for s in self.sections:
            if s.type not in (SHT_RELA, SHT_REL):
                continue
            step = 24 if s.type == SHT_RELA else 16
            for off in range(s.offset, s.offset + s.size, step):
                (_offset, info) = self._unpack("QQ", off)
                out.append((s.info, info >> 32))
        return out
