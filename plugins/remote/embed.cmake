# Writes the bytes of file IN as the C array NAME (and NAME_size) into the
# C file OUT: cmake -DIN=... -DOUT=... -DNAME=... -P embed.cmake.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${IN} by embed.cmake. */
#include <stddef.h>

_Alignas(16) const unsigned char ${NAME}[] = {
${bytes}};
const size_t ${NAME}_size = ${size};
")
