/* CRC32C (Castagnoli), the checksum of what BDMPI stores and reads back:
 * sbpages of the memory manager, spill files.  With SSE4.2 it runs on the
 * CPU's crc32 instruction, else from tables.  Async-signal-safe, no locks,
 * no allocation: it runs in the memory manager's I/O workers and fault
 * handlers too. */
#ifndef BD_CRC_H
#define BD_CRC_H

#include <stddef.h>
#include <stdint.h>

/* The CRC32C of len bytes at p, continuing from crc (0 to start): so
 * bd_crc32c(bd_crc32c(0, a, n), b, m) is the CRC32C of a followed by b. */
uint32_t bd_crc32c(uint32_t crc, const void *p, size_t len);
/* 1 if the instruction is used, 0 if the tables are. */
int bd_crc32c_hw(void);
/* The table version (tests compare both). */
uint32_t bd_crc32c_soft(uint32_t crc, const void *p, size_t len);

#endif
