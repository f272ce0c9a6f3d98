/*
 * bdooc.h -- explicit out-of-core data movement for the -ooc variants
 * (the paper's BDMPI-ooc).  A program registers its large arrays; before a
 * blocking MPI call it unloads them (each array is written to the rank's
 * spill file unless an identical copy is already there, then freed) and
 * after the call it loads them back (malloc + read).  Read-only arrays are
 * written once and afterwards only freed and re-read.  The spill file is
 * unlinked as soon as it is created, so nothing is left behind.
 */
#ifndef BDAPPS_BDOOC_H
#define BDAPPS_BDOOC_H

#include <stddef.h>
#include <stdint.h>

#define BDOOC_MAX 16

typedef struct {
    void **pp;    /* where the program keeps the array's pointer */
    size_t bytes; /* current size */
    int readonly; /* contents never change once registered */
    int on_disk;  /* file slot holds the current contents */
    int64_t off;  /* file slot */
    size_t cap;   /* file slot capacity */
    int out;      /* unloaded by the last bdooc_unload */
} bdooc_arr_t;

typedef struct {
    int fd;
    int loaded;
    int n;
    bdooc_arr_t a[BDOOC_MAX];
    int64_t end;
    double io_seconds;
    uint64_t bytes_written, bytes_read;
} bdooc_t;

/* Create the spill file in dir (NULL or "" means $TMPDIR, else /tmp). */
int bdooc_open(bdooc_t *o, const char *dir, const char *tag, int rank);
void bdooc_close(bdooc_t *o);
/* Register *pp (already allocated, `bytes` long, may be 0). */
void bdooc_add(bdooc_t *o, void **pp, size_t bytes, int readonly);
/* Tell the store that a registered array changed size (after a realloc). */
void bdooc_resize(bdooc_t *o, void **pp, size_t bytes);
/* Drop a registration (the program keeps ownership of the memory). */
void bdooc_remove(bdooc_t *o, void **pp);
/* Write the registered arrays out (where needed) and free them. */
int bdooc_unload(bdooc_t *o);
/* Allocate and read the registered arrays back. */
int bdooc_load(bdooc_t *o);

#endif
