#!/usr/bin/env python3
"""A hostile guest: maps the ivshmem device's memory (or any file) and
writes random bytes over all of it.  usage: scribble.py PATH"""
import mmap
import os
import sys


def main(path):
    fd = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        with mmap.mmap(fd, size) as m:
            step = 1 << 20
            for off in range(0, size, step):
                n = min(step, size - off)
                m[off:off + n] = os.urandom(n)
    finally:
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
