/* SPDX-License-Identifier: MIT */
/*
 * hot.h - RS_HOT marks a function on the path of the common calls: a
 * read or write, and a fresh connection's socket, setsockopt, connect and
 * close.  GCC places such functions together in .text.hot, so that one
 * call touches few instruction cache lines and pages: between two
 * connects a program does other work, which empties the CPU's own
 * caches, and the library's code comes back from farther away the fewer
 * pages and lines it is spread over.
 */
#ifndef RS_HOT_H
#define RS_HOT_H

#define RS_HOT __attribute__((hot))

#endif /* RS_HOT_H */
