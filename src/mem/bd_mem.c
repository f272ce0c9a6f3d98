/* bd_mem.c - SBMA core: arena, allocation table, load/unload, public API.
 *
 * Locking: one mutex (G.lock) protects the allocation table and all sbpage
 * state.  It is taken by API calls and by the fault path (handler thread or
 * SIGSEGV handler).  Code holding it never touches the application's view of
 * memory from user space (it uses the kernel: pread/pwrite/UFFDIO_COPY, or
 * the staging view), so a fault can never happen while it is held.  The
 * acquire/release callbacks are always called with the lock dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem_internal.h"

#define G bdm_g
#define MAX_OPEN_FDS 256
#define DEFAULT_ARENA (16ULL << 40)
#define MIN_ARENA (1ULL << 30)
#define KIB 1024UL

mem_global_t bdm_g = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .uffd = -1,
    .pagemap_fd = -1,
    .stop_fd = -1,
    .memfd = -1,
};

#define LOCK() pthread_mutex_lock(&G.lock)
#define UNLOCK() pthread_mutex_unlock(&G.lock)

static void atfork_child(void);

static inline int is_uffd(void) { return G.track == BD_MEM_TRACK_UFFD; }
static inline int is_ar(void) { return G.strategy != BD_MEM_LRLW; }
static inline size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }

/* ------------------------------------------------------------------------ */
/* allocation records and table                                              */

static alloc_t *alloc_new(void) {
  if (!G.free_allocs) {
    size_t bytes = 64 * KIB;
    alloc_t *blk = bdm_map(bytes);
    if (!blk) return NULL;
    for (size_t i = 0; i < bytes / sizeof(alloc_t); i++) {
      blk[i].next_free = G.free_allocs;
      G.free_allocs = &blk[i];
    }
  }
  alloc_t *a = G.free_allocs;
  G.free_allocs = a->next_free;
  memset(a, 0, sizeof *a);
  a->fd = -1;
  return a;
}

static void alloc_put(alloc_t *a) {
  a->next_free = G.free_allocs;
  G.free_allocs = a;
}

/* Index of the last allocation with base <= addr, or -1. */
static long tab_idx(uintptr_t addr) {
  long lo = 0, hi = (long)G.ntab - 1, ans = -1;
  while (lo <= hi) {
    long mid = (lo + hi) / 2;
    if (G.tab[mid]->base <= addr) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return ans;
}

alloc_t *bdm_lookup(uintptr_t addr) {
  long i = tab_idx(addr);
  if (i < 0) return NULL;
  alloc_t *a = G.tab[i];
  return addr < a->base + a->len ? a : NULL;
}

static int tab_insert(alloc_t *a) {
  if (G.ntab == G.tabcap) {
    size_t ncap = G.tabcap ? G.tabcap * 2 : 1024;
    void *nt;
    if (G.tab)
      nt = mremap(G.tab, G.tabcap * sizeof(alloc_t *), ncap * sizeof(alloc_t *), MREMAP_MAYMOVE);
    else
      nt = mmap(NULL, ncap * sizeof(alloc_t *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (nt == MAP_FAILED) return -ENOMEM;
    G.tab = nt;
    G.tabcap = ncap;
  }
  long i = tab_idx(a->base) + 1;
  memmove(&G.tab[i + 1], &G.tab[i], (G.ntab - (size_t)i) * sizeof(alloc_t *));
  G.tab[i] = a;
  G.ntab++;
  return 0;
}

static void tab_remove(long i) {
  memmove(&G.tab[i], &G.tab[i + 1], (G.ntab - (size_t)i - 1) * sizeof(alloc_t *));
  G.ntab--;
}

/* First fit in the arena.  The first pass keeps as much free address space
 * behind every allocation as it is long (capped), so that realloc can
 * usually grow in place; the second pass takes any gap. */
#define GROW_ROOM_MAX (64ULL << 30)
static uintptr_t gap_find(size_t len, size_t align) {
  uintptr_t end = G.arena_lo + G.arena_len;
  for (int pass = 0; pass < 2; pass++) {
    uintptr_t prev = G.arena_lo;
    size_t keep = 0;
    for (size_t i = 0; i <= G.ntab; i++) {
      uintptr_t next = i < G.ntab ? G.tab[i]->base : end;
      uintptr_t from = prev + (pass == 0 ? keep : 0);
      uintptr_t cand = (from + align - 1) & ~(uintptr_t)(align - 1);
      if (from >= prev && cand >= from && cand <= next && next - cand >= len) return cand;
      if (i < G.ntab) {
        prev = G.tab[i]->base + G.tab[i]->len;
        keep = G.tab[i]->len < GROW_ROOM_MAX ? G.tab[i]->len : GROW_ROOM_MAX;
      }
    }
  }
  return 0;
}

static int st_resize(alloc_t *a, size_t nsb) {
  size_t need = round_up(nsb ? nsb : 1, G.page);
  if (need <= a->st_bytes) return 0;
  void *n;
  if (a->st)
    n = mremap(a->st, a->st_bytes, need, MREMAP_MAYMOVE);
  else
    n = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (n == MAP_FAILED) return -ENOMEM;
  a->st = n;
  a->st_bytes = need;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* backing files                                                             */

static void backing_path(const alloc_t *a, char *out) {
  char num[24];
  memcpy(out, G.dir, G.dirlen);
  size_t n = G.dirlen;
  memcpy(out + n, "/bdmem.", 7);
  n += 7;
  bdm_fmt_u64(num, (uint64_t)getpid());
  memcpy(out + n, num, strlen(num));
  n += strlen(num);
  out[n++] = '.';
  bdm_fmt_u64(num, a->id);
  memcpy(out + n, num, strlen(num) + 1);
}

int bdm_open_backing(alloc_t *a, int create) {
  if (a->fd >= 0) return a->fd;
  if (!a->has_file && !create) return -ENOENT;
  char path[sizeof G.dir + 64];
  backing_path(a, path);
  int flags = O_RDWR | O_CLOEXEC;
  if (!a->has_file) flags |= O_CREAT | O_TRUNC;
  int fd = -1;
  if (G.direct_io) {
    fd = open(path, flags | O_DIRECT, 0600);
    if (fd < 0 && errno == EINVAL) {
      G.direct_io = 0; /* file system without O_DIRECT (e.g. some tmpfs) */
      G.st.direct_io = 0;
    }
  }
  if (fd < 0 && !G.direct_io) fd = open(path, flags, 0600);
  if (fd < 0) return -errno;
  a->has_file = 1;
  a->fd = fd;
  G.nfds++;
  return fd;
}

static void backing_done(alloc_t *a) {
  if (a->fd >= 0 && G.nfds > MAX_OPEN_FDS) {
    close(a->fd);
    a->fd = -1;
    G.nfds--;
  }
}

static void backing_drop_cache(int fd, off_t off, size_t len, int written) {
  if (G.direct_io) return;
  if (written) sync_file_range(fd, off, (off_t)len, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
  posix_fadvise(fd, off, (off_t)len, POSIX_FADV_DONTNEED);
}

static void backing_remove(alloc_t *a) {
  if (a->fd >= 0) {
    close(a->fd);
    a->fd = -1;
    G.nfds--;
  }
  if (a->has_file) {
    char path[sizeof G.dir + 64];
    backing_path(a, path);
    unlink(path);
    a->has_file = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* accounting                                                                */

static size_t acct_target(const alloc_t *a) {
  if (is_ar() && a->loaded) return a->len;
  return a->nres * G.sbpage;
}

static void acct_add(alloc_t *a, size_t n) {
  a->acct += n;
  G.st.resident += n;
  if (G.st.resident > G.st.peak_resident) G.st.peak_resident = G.st.resident;
}

/* Give back accounted bytes above the target; returns bytes to release. */
static size_t acct_trim(alloc_t *a) {
  size_t t = acct_target(a);
  if (a->acct <= t) return 0;
  size_t ex = a->acct - t;
  a->acct = t;
  G.st.resident -= ex;
  return ex;
}

static void do_release(size_t n) {
  if (n && G.release) G.release(G.ctx, n);
}

/* ------------------------------------------------------------------------ */
/* loading                                                                   */

static void degrade(alloc_t *a);

static int read_run(alloc_t *a, size_t s, size_t n, int in_fault) {
  size_t sb = G.sbpage;
  int fd = bdm_open_backing(a, 0);
  if (fd < 0) {
    if (in_fault) bdm_die("cannot open backing file to load managed memory", -fd, n * sb);
    return fd;
  }
  uint64_t t0 = bdm_now_ns();
  off_t off = (off_t)(s * sb);
  size_t len = n * sb;
  uintptr_t dst = a->base + s * sb;
  int rc = 0;
  if (is_uffd()) {
    size_t piece = G.bounce_len;
    while (len > 0 && rc == 0) {
      size_t m = len < piece ? len : piece;
      rc = bdm_pread_all(fd, G.bounce, m, off);
      if (rc == 0) {
        bdm_uffd_install(dst, G.bounce, m);
        backing_drop_cache(fd, off, m, 0);
        dst += m;
        off += (off_t)m;
        len -= m;
      }
    }
  } else {
    rc = bdm_pread_all(fd, bdm_stage(dst), len, off);
    if (rc == 0) backing_drop_cache(fd, off, len, 0);
  }
  G.st.io_ns += bdm_now_ns() - t0;
  if (rc != 0) {
    if (in_fault) bdm_die("reading backing file failed while loading managed memory", -rc, n * sb);
    return rc;
  }
  G.st.bytes_read += n * sb;
  backing_done(a);
  return 0;
}

static void zero_run(alloc_t *a, size_t s, size_t n) {
  if (!is_uffd()) return; /* memfd holes read as zeros */
  uintptr_t dst = a->base + s * G.sbpage;
  size_t len = n * G.sbpage;
  while (len > 0) {
    size_t m = len < G.zeros_len ? len : G.zeros_len;
    bdm_uffd_install(dst, G.zeros, m);
    dst += m;
    len -= m;
  }
}

/* Make the non-resident sbpages of [s0, s1) resident.  disk_only: only the
 * stored ones (uffd whole-allocation load; the rest is zero-filled lazily).
 * Returns 0 or -errno (never fails when in_fault: it dies instead). */
static int load_range(alloc_t *a, size_t s0, size_t s1, int disk_only, int in_fault) {
  size_t sb = G.sbpage;
  size_t i = s0;
  int did = 0;
  while (i < s1) {
    if (a->st[i] & SB_RES) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < s1 && !(a->st[j] & SB_RES)) j++;
    /* [i, j) is a maximal non-resident run; fill it piece by piece. */
    size_t k = i;
    while (k < j) {
      size_t m = k;
      uint8_t d = a->st[k] & SB_DISK;
      while (m < j && (a->st[m] & SB_DISK) == d) m++;
      if (d) {
        int rc = read_run(a, k, m - k, in_fault);
        if (rc) return rc;
      } else if (!disk_only) {
        zero_run(a, k, m - k);
      }
      if (d || !disk_only) {
        for (size_t x = k; x < m; x++) a->st[x] |= SB_RES;
        a->nres += m - k;
        did = 1;
      }
      k = m;
    }
    if (!is_uffd()) {
      /* in the mprotect path disk_only is never used: the run is complete */
      int rc = bdm_prot_set(a->base + i * sb, (j - i) * sb, PROT_READ);
      if (rc == -ENOMEM) {
        degrade(a);
        return 0;
      }
      if (rc) bdm_die("mprotect failed while loading managed memory", -rc, (j - i) * sb);
    }
    i = j;
  }
  if (did) G.st.loads++;
  return 0;
}

/* mprotect path: mark resident sbpages of [s0, s1) dirty and writable. */
static void mark_dirty(alloc_t *a, size_t s0, size_t s1) {
  size_t sb = G.sbpage;
  size_t i = s0;
  while (i < s1) {
    if ((a->st[i] & (SB_RES | SB_DIRTY)) != SB_RES) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < s1 && (a->st[j] & (SB_RES | SB_DIRTY)) == SB_RES) j++;
    int rc = bdm_prot_set(a->base + i * sb, (j - i) * sb, PROT_READ | PROT_WRITE);
    if (rc == -ENOMEM) {
      degrade(a);
      return;
    }
    if (rc) bdm_die("mprotect failed while tracking writes", -rc, (j - i) * sb);
    for (size_t x = i; x < j; x++) a->st[x] |= SB_DIRTY;
    i = j;
  }
}

/* The process ran out of VMAs (vm.max_map_count): make the whole allocation
 * resident, dirty and writable, which needs a single VMA.  Correct, but the
 * next unload writes all of it.  The bytes are accounted without asking. */
static void degrade(alloc_t *a) {
  static int warned;
  if (!warned) {
    warned = 1;
    bdm_msg("bdmem: warning: mprotect ran out of memory mappings (vm.max_map_count); "
            "tracking of an allocation degraded to whole-allocation granularity\n");
  }
  for (size_t i = 0; i < a->nsb;) {
    if ((a->st[i] & (SB_RES | SB_DISK)) != SB_DISK) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < a->nsb && (a->st[j] & (SB_RES | SB_DISK)) == SB_DISK) j++;
    read_run(a, i, j - i, 1);
    i = j;
  }
  for (size_t i = 0; i < a->nsb; i++) a->st[i] |= SB_RES | SB_DIRTY;
  a->nres = a->nsb;
  if (mprotect((void *)a->base, a->len, PROT_READ | PROT_WRITE) != 0)
    bdm_die("mprotect failed even for a whole allocation; raise vm.max_map_count or use a larger sbpage", errno,
            a->len);
  if (a->acct < acct_target(a)) acct_add(a, acct_target(a) - a->acct);
}

/* Make [lo, hi) (inside one allocation) resident; for a fault, the chunk
 * around lo.  Returns 0, 1 (not managed) or -errno (prepare only). */
static int ensure(uintptr_t lo, uintptr_t hi, int write, int in_fault) {
  size_t sb = G.sbpage;
  LOCK();
  alloc_t *a = bdm_lookup(lo);
  if (!a) {
    UNLOCK();
    return 1;
  }
  if (in_fault) G.st.faults++;
  if (hi > a->base + a->len) hi = a->base + a->len;
  size_t i0 = (lo - a->base) / sb, i1 = (hi - 1 - a->base) / sb + 1;
  int was_res = (a->st[i0] & SB_RES) != 0;
  int all_res = 1;
  for (size_t i = i0; i < i1; i++)
    if (!(a->st[i] & SB_RES)) {
      all_res = 0;
      break;
    }
  int whole = is_ar() && !a->loaded;
  if (!all_res || whole) {
    size_t s0 = i0, s1 = i1;
    if (in_fault) {
      /* AR allocations are accounted as a whole, so the never-stored
       * sbpages the uffd path fills lazily can be filled in bigger pieces
       * (each fault is a handler-thread round trip). */
      size_t csb = G.chunk_sb;
      if (is_uffd() && is_ar() && csb * sb < (2u << 20)) csb = ((2u << 20) + sb - 1) / sb;
      s0 = i0 / csb * csb;
      s1 = s0 + csb;
      if (s1 < i1) s1 = i1;
      if (s1 > a->nsb) s1 = a->nsb;
    }
    /* accounting: ask before the bytes become resident */
    size_t target;
    if (is_ar()) {
      target = a->len;
    } else {
      size_t add = 0;
      for (size_t i = s0; i < s1; i++)
        if (!(a->st[i] & SB_RES)) add++;
      target = (a->nres + add) * sb;
    }
    if (target > a->acct) {
      size_t need = target - a->acct;
      if (G.acquire) {
        uint64_t id = a->id;
        UNLOCK();
        int rc = G.acquire(G.ctx, need);
        if (rc != 0) {
          if (in_fault) bdm_die("memory budget refused loading managed memory (acquire failed)", rc < 0 ? -rc : 0, need);
          return rc < 0 ? rc : -ENOMEM;
        }
        LOCK();
        a = bdm_lookup(lo);
        if (!a || a->id != id) { /* freed meanwhile */
          UNLOCK();
          do_release(need);
          return in_fault ? 0 : 1;
        }
        whole = is_ar() && !a->loaded;
      }
      acct_add(a, need);
    }
    int rc = 0;
    if (whole) {
      rc = load_range(a, 0, a->nsb, is_uffd(), in_fault);
      if (rc == 0) a->loaded = 1;
    }
    if (rc == 0) rc = load_range(a, s0, s1, 0, in_fault);
    if (rc != 0) {
      size_t ex = acct_trim(a);
      UNLOCK();
      do_release(ex);
      return rc;
    }
  }
  if (!is_uffd()) {
    if (write == 1)
      mark_dirty(a, i0, i1);
    else if (write == -1 && was_res)
      mark_dirty(a, i0, i0 + 1); /* a fault on a readable page is a write */
  }
  size_t ex = acct_trim(a);
  UNLOCK();
  do_release(ex);
  return 0;
}

int bdm_fault(uintptr_t addr, int write) { return ensure(addr, addr + G.page, write, 1) == 1 ? 1 : 0; }

/* ------------------------------------------------------------------------ */
/* unloading                                                                 */

static int release_mem(alloc_t *a, size_t s0, size_t s1) {
  uintptr_t addr = a->base + s0 * G.sbpage;
  size_t len = (s1 - s0) * G.sbpage;
  if (len == 0) return 0;
  if (is_uffd()) {
    if (madvise((void *)addr, len, MADV_DONTNEED) != 0) return -errno;
    return 0;
  }
  int rc = bdm_prot_set(addr, len, PROT_NONE);
  if (rc) return rc;
  return bdm_prot_punch(addr, len);
}

/* Write dirty sbpages and release all memory of a.  Adds the bytes to give
 * back to *rel.  On error a stays resident with its dirty data. */
static int unload_one(alloc_t *a, size_t *rel) {
  size_t sb = G.sbpage;
  if (a->nres == 0 && !a->loaded) {
    *rel += a->acct;
    G.st.resident -= a->acct;
    a->acct = 0;
    return 0;
  }
  if (is_uffd()) {
    int rc = bdm_uffd_scan_dirty(a);
    if (rc) return rc;
  }
  for (size_t i = 0; i < a->nsb;) {
    if (!(a->st[i] & SB_DIRTY)) {
      i++;
      continue;
    }
    size_t j = i;
    while (j < a->nsb && (a->st[j] & SB_DIRTY)) j++;
    int fd = bdm_open_backing(a, 1);
    if (fd < 0) return fd;
    uintptr_t addr = a->base + i * sb;
    const void *src = is_uffd() ? (const void *)addr : (const void *)bdm_stage(addr);
    uint64_t t0 = bdm_now_ns();
    int rc = bdm_pwrite_all(fd, src, (j - i) * sb, (off_t)(i * sb));
    if (rc == 0) backing_drop_cache(fd, (off_t)(i * sb), (j - i) * sb, 1);
    G.st.io_ns += bdm_now_ns() - t0;
    if (rc) return rc;
    G.st.bytes_written += (j - i) * sb;
    for (size_t x = i; x < j; x++) a->st[x] = (uint8_t)((a->st[x] & ~SB_DIRTY) | SB_DISK);
    i = j;
  }
  int rc = release_mem(a, 0, a->nsb);
  if (rc) bdm_die("releasing memory of an unloaded allocation failed", -rc, a->len);
  for (size_t i = 0; i < a->nsb; i++) a->st[i] &= SB_DISK;
  a->nres = 0;
  a->loaded = 0;
  *rel += a->acct;
  G.st.resident -= a->acct;
  a->acct = 0;
  G.st.unloads++;
  backing_done(a);
  return 0;
}

/* Free everything that belongs to a (memory, file, record); caller removes it
 * from the table.  Returns accounted bytes to release. */
static size_t destroy(alloc_t *a) {
  if (is_uffd()) {
    bdm_uffd_unmap(a->base, a->len);
  } else {
    bdm_prot_set(a->base, a->len, PROT_NONE);
    bdm_prot_punch(a->base, a->len);
  }
  backing_remove(a);
  size_t rel = a->acct;
  G.st.resident -= a->acct;
  G.st.nallocs--;
  G.st.managed_bytes -= a->len;
  if (a->st) munmap(a->st, a->st_bytes);
  alloc_put(a);
  return rel;
}

/* ------------------------------------------------------------------------ */
/* public API                                                                */

static int reserve_arena(size_t want) {
  if (__atomic_load_n(&G.arena_len, __ATOMIC_ACQUIRE)) {
    /* kept from an earlier init; make sure it is a plain reservation */
    if (mmap((void *)G.arena_lo, G.arena_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
             -1, 0) == MAP_FAILED)
      return -errno;
    return 0;
  }
  size_t sz = want ? want : DEFAULT_ARENA;
  size_t min = want ? want : MIN_ARENA;
  for (; sz >= min; sz /= 2) {
    void *p = mmap(NULL, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      G.arena_lo = (uintptr_t)p;
      __atomic_store_n(&G.arena_len, sz, __ATOMIC_RELEASE);
      return 0;
    }
  }
  return -ENOMEM;
}

int bd_mem_init(const bd_mem_config_t *cfg) {
  if (!cfg || !cfg->dir || !cfg->dir[0]) return -EINVAL;
  LOCK();
  if (G.active) {
    UNLOCK();
    return -EALREADY;
  }
  int rc = 0;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t sbpage = cfg->sbpage ? cfg->sbpage : 64 * KIB;
  size_t chunk = cfg->chunk ? cfg->chunk : 64 * KIB;
  size_t dirlen = strlen(cfg->dir);
  struct stat sst;
  if (sbpage % page != 0 || dirlen + 64 >= sizeof G.dir || cfg->strategy > BD_MEM_LRLW ||
      cfg->track > BD_MEM_TRACK_MPROTECT) {
    rc = -EINVAL;
    goto out;
  }
  if (stat(cfg->dir, &sst) != 0) {
    rc = -errno;
    goto out;
  }
  if (!S_ISDIR(sst.st_mode)) {
    rc = -ENOTDIR;
    goto out;
  }
  if (access(cfg->dir, W_OK | X_OK) != 0) {
    rc = -errno;
    goto out;
  }
  if (chunk < 64 * KIB) chunk = 64 * KIB;
  G.page = page;
  G.sbpage = sbpage;
  G.threshold = cfg->threshold ? cfg->threshold : 1024 * KIB;
  G.chunk_sb = (chunk + sbpage - 1) / sbpage;
  G.strategy = cfg->strategy;
  memcpy(G.dir, cfg->dir, dirlen + 1);
  while (dirlen > 1 && G.dir[dirlen - 1] == '/') G.dir[--dirlen] = 0;
  G.dirlen = dirlen;
  G.acquire = cfg->acquire;
  G.release = cfg->release;
  G.ctx = cfg->ctx;
  G.direct_io = 1;
  G.nfds = 0;
  memset(&G.st, 0, sizeof G.st);
  G.st.direct_io = 1;

  int track = cfg->track;
  const char *env = getenv("BD_MEM_TRACK");
  if (env && env[0]) {
    if (!strcmp(env, "uffd") || !strcmp(env, "userfaultfd"))
      track = BD_MEM_TRACK_UFFD;
    else if (!strcmp(env, "mprotect") || !strcmp(env, "signal"))
      track = BD_MEM_TRACK_MPROTECT;
    else if (!strcmp(env, "auto"))
      track = BD_MEM_TRACK_AUTO;
  }

  rc = reserve_arena(cfg->arena);
  if (rc) goto out;
  G.bounce_len = round_up(4096 * KIB, sbpage);
  if (G.bounce_len < G.chunk_sb * sbpage) G.bounce_len = G.chunk_sb * sbpage;
  G.bounce = bdm_map(G.bounce_len);
  if (!G.bounce) {
    rc = -ENOMEM;
    goto out;
  }
  G.track = BD_MEM_TRACK_MPROTECT;
  if (track != BD_MEM_TRACK_MPROTECT) {
    rc = bdm_uffd_setup(track == BD_MEM_TRACK_UFFD);
    if (rc == 0) {
      G.track = BD_MEM_TRACK_UFFD;
    } else if (track == BD_MEM_TRACK_UFFD) {
      rc = -ENOTSUP;
      goto fail_bounce;
    }
  }
  if (G.track == BD_MEM_TRACK_MPROTECT) {
    rc = bdm_prot_setup();
    if (rc) goto fail_bounce;
  }
  G.st.track = G.track;
  G.st.kernel_faults = G.kernel_faults;
  G.next_id = 1;
  static int atfork_done;
  if (!atfork_done && pthread_atfork(NULL, NULL, atfork_child) == 0) atfork_done = 1;
  __atomic_store_n(&G.active, 1, __ATOMIC_RELEASE);
  UNLOCK();
  return 0;

fail_bounce:
  bdm_unmap(G.bounce, G.bounce_len);
  G.bounce = NULL;
out:
  UNLOCK();
  return rc;
}

void bd_mem_fini(void) {
  LOCK();
  if (!G.active) {
    UNLOCK();
    return;
  }
  __atomic_store_n(&G.active, 0, __ATOMIC_RELEASE);
  size_t rel = 0;
  while (G.ntab > 0) {
    alloc_t *a = G.tab[G.ntab - 1];
    G.ntab--;
    rel += destroy(a);
  }
  UNLOCK();
  if (G.track == BD_MEM_TRACK_UFFD)
    bdm_uffd_teardown();
  else
    bdm_prot_teardown();
  LOCK();
  /* keep the address range reserved so that stale pointers stay ours */
  mmap((void *)G.arena_lo, G.arena_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  bdm_unmap(G.bounce, G.bounce_len);
  G.bounce = NULL;
  UNLOCK();
  do_release(rel);
}

int bd_mem_active(void) { return __atomic_load_n(&G.active, __ATOMIC_ACQUIRE); }

/* A forked child shares the parent's userfaultfd and (mprotect path) memfd:
 * it must not use the manager.  Managed pointers stay "ours" in the child, so
 * free() of them is a no-op there. */
static void atfork_child(void) { __atomic_store_n(&G.active, 0, __ATOMIC_RELAXED); }

size_t bd_mem_threshold(void) { return bd_mem_active() ? G.threshold : (size_t)-1; }

int bd_mem_owns(const void *p) {
  size_t len = __atomic_load_n(&G.arena_len, __ATOMIC_ACQUIRE);
  return (uintptr_t)p - G.arena_lo < len;
}

int bd_mem_overlaps(const void *p, size_t len) {
  if (len == 0 || !bd_mem_active()) return 0;
  uintptr_t lo = (uintptr_t)p, hi = lo + len;
  if (hi < lo) hi = UINTPTR_MAX; /* a bogus length still must not wrap */
  return lo < G.arena_lo + G.arena_len && hi > G.arena_lo;
}

void *bd_mem_alloc(size_t size, size_t align) {
  if (!bd_mem_active()) {
    errno = EINVAL;
    return NULL;
  }
  if (align & (align - 1)) {
    errno = EINVAL;
    return NULL;
  }
  if (size == 0) size = 1;
  if (align < G.sbpage) align = G.sbpage;
  size_t len = round_up(size, G.sbpage);
  if (len < size) {
    errno = ENOMEM;
    return NULL;
  }
  LOCK();
  uintptr_t base = gap_find(len, align);
  alloc_t *a = NULL;
  int rc = base ? 0 : -ENOMEM;
  if (rc == 0 && is_uffd()) rc = bdm_uffd_map(base, len);
  if (rc == 0) {
    a = alloc_new();
    if (!a) rc = -ENOMEM;
  }
  if (rc == 0) {
    a->base = base;
    a->size = size;
    a->len = len;
    a->nsb = len / G.sbpage;
    a->id = G.next_id++;
    rc = st_resize(a, a->nsb);
    if (rc == 0) rc = tab_insert(a);
    if (rc != 0) {
      if (a->st) munmap(a->st, a->st_bytes);
      alloc_put(a);
      if (is_uffd()) bdm_uffd_unmap(base, len);
    }
  }
  if (rc == 0) {
    G.st.nallocs++;
    G.st.managed_bytes += len;
  }
  UNLOCK();
  if (rc != 0) {
    errno = -rc;
    return NULL;
  }
  return (void *)base;
}

static void bad_pointer(const char *fn, const void *p) {
  char msg[200], hex[24];
  size_t n = 0;
  const char *parts[4] = {fn, ": invalid pointer ", hex,
                          " (inside the managed arena but not the start of a live allocation: double free or "
                          "interior pointer)"};
  bdm_fmt_hex(hex, (uint64_t)(uintptr_t)p);
  for (int i = 0; i < 4; i++) {
    size_t l = strlen(parts[i]);
    if (n + l >= sizeof msg) l = sizeof msg - 1 - n;
    memcpy(msg + n, parts[i], l);
    n += l;
  }
  msg[n] = 0;
  UNLOCK();
  bdm_die(msg, 0, 0);
}

/* Locked: the allocation starting exactly at p, or abort. */
static long find_exact(const char *fn, const void *p) {
  long i = tab_idx((uintptr_t)p);
  if (i < 0 || G.tab[i]->base != (uintptr_t)p) bad_pointer(fn, p);
  return i;
}

void bd_mem_free(void *p) {
  if (!p) return;
  if (!bd_mem_active()) {
    if (bd_mem_owns(p)) return; /* after bd_mem_fini everything is gone already */
    bdm_die("bd_mem_free: pointer was not allocated by the memory manager", 0, 0);
  }
  LOCK();
  if (!bd_mem_owns(p)) bad_pointer("bd_mem_free", p);
  long i = find_exact("bd_mem_free", p);
  alloc_t *a = G.tab[i];
  tab_remove(i);
  size_t rel = destroy(a);
  UNLOCK();
  do_release(rel);
}

size_t bd_mem_usable_size(const void *p) {
  if (!bd_mem_active() || !bd_mem_owns(p)) return 0;
  LOCK();
  alloc_t *a = bdm_lookup((uintptr_t)p);
  size_t n = (a && a->base == (uintptr_t)p) ? a->len : 0;
  UNLOCK();
  return n;
}

/* Copy the first n bytes of a managed range to dst, skipping sbpages that
 * hold no data (neither resident nor stored: they read as zeros and dst is
 * fresh memory).  Runs without the lock: the copy itself faults. */
static void copy_data(uintptr_t dst, alloc_t *a, size_t n) {
  size_t sb = G.sbpage;
  size_t ns = (n + sb - 1) / sb;
  for (size_t i = 0; i < ns;) {
    uint8_t s = __atomic_load_n(&a->st[i], __ATOMIC_RELAXED);
    size_t j = i + 1;
    int has = (s & (SB_RES | SB_DISK)) != 0;
    while (j < ns && ((__atomic_load_n(&a->st[j], __ATOMIC_RELAXED) & (SB_RES | SB_DISK)) != 0) == has) j++;
    if (has) {
      size_t off = i * sb, end = j * sb < n ? j * sb : n;
      memcpy((void *)(dst + off), (const void *)(a->base + off), end - off);
    }
    i = j;
  }
}

void *bd_mem_realloc(void *p, size_t size) {
  if (!p) return bd_mem_alloc(size, 0);
  if (size == 0) {
    bd_mem_free(p);
    return NULL;
  }
  if (!bd_mem_active()) {
    errno = EINVAL;
    return NULL;
  }
  size_t sb = G.sbpage;
  size_t newlen = round_up(size, sb);
  if (newlen < size) {
    errno = ENOMEM;
    return NULL;
  }
  LOCK();
  if (!bd_mem_owns(p)) bad_pointer("bd_mem_realloc", p);
  long idx = find_exact("bd_mem_realloc", p);
  alloc_t *a = G.tab[idx];
  if (newlen == a->len) {
    a->size = size;
    UNLOCK();
    return p;
  }
  if (newlen < a->len) { /* shrink in place */
    size_t ns = newlen / sb;
    for (size_t i = ns; i < a->nsb; i++)
      if (a->st[i] & SB_RES) a->nres--;
    if (is_uffd()) {
      bdm_uffd_unmap(a->base + newlen, a->len - newlen);
    } else {
      bdm_prot_set(a->base + newlen, a->len - newlen, PROT_NONE);
      bdm_prot_punch(a->base + newlen, a->len - newlen);
    }
    memset(a->st + ns, 0, a->nsb - ns);
    if (a->has_file) {
      int fd = bdm_open_backing(a, 0);
      if (fd >= 0) {
        if (ftruncate(fd, (off_t)newlen) != 0) { /* only wastes disk space */ }
        backing_done(a);
      }
    }
    G.st.managed_bytes -= a->len - newlen;
    a->len = newlen;
    a->nsb = ns;
    a->size = size;
    size_t ex = acct_trim(a);
    UNLOCK();
    do_release(ex);
    return p;
  }
  /* grow in place if the address space behind is free */
  uintptr_t next = (size_t)idx + 1 < G.ntab ? G.tab[idx + 1]->base : G.arena_lo + G.arena_len;
  if (next - a->base >= newlen) {
    int rc = st_resize(a, newlen / sb);
    if (rc == 0 && is_uffd()) rc = bdm_uffd_map(a->base + a->len, newlen - a->len);
    if (rc == 0) {
      size_t ns = newlen / sb;
      memset(a->st + a->nsb, 0, ns - a->nsb);
      G.st.managed_bytes += newlen - a->len;
      a->nsb = ns;
      a->len = newlen;
      a->size = size;
      /* AR: the new part is accounted when it is first touched */
      a->loaded = 0;
      UNLOCK();
      return p;
    }
  }
  size_t oldsize = a->size;
  UNLOCK();
  void *q = bd_mem_alloc(size, 0);
  if (!q) return NULL;
  copy_data((uintptr_t)q, a, oldsize < size ? oldsize : size);
  bd_mem_free(p);
  return q;
}

int bd_mem_unload_all(void) {
  if (!bd_mem_active()) return 0;
  size_t rel = 0;
  int first = 0;
  LOCK();
  for (size_t i = 0; i < G.ntab; i++) {
    int rc = unload_one(G.tab[i], &rel);
    if (rc && !first) first = rc;
  }
  UNLOCK();
  do_release(rel);
  return first;
}

int bd_mem_block_point(void) {
  if (bd_mem_active() && G.strategy == BD_MEM_ARAW) return bd_mem_unload_all();
  return 0;
}

int bd_mem_discard(void *addr, size_t len) {
  if (!bd_mem_active() || len == 0) return 0;
  uintptr_t lo = (uintptr_t)addr, hi = lo + len;
  if (hi < lo) return -EINVAL;
  size_t sb = G.sbpage;
  size_t rel = 0;
  int first = 0;
  LOCK();
  long i = tab_idx(lo);
  if (i < 0) i = 0;
  for (; (size_t)i < G.ntab && G.tab[i]->base < hi; i++) {
    alloc_t *a = G.tab[i];
    uintptr_t l = lo > a->base ? lo : a->base;
    uintptr_t h = hi < a->base + a->len ? hi : a->base + a->len;
    if (l >= h) continue;
    size_t s0 = (l - a->base + sb - 1) / sb, s1 = (h - a->base) / sb;
    for (size_t s = s0; s < s1;) {
      uint8_t f = a->st[s] & (SB_RES | SB_DISK);
      size_t e = s + 1;
      while (e < s1 && (a->st[e] & (SB_RES | SB_DISK)) == f) e++;
      if (f & SB_RES) {
        int rc = release_mem(a, s, e);
        if (rc && !first) first = rc;
        a->nres -= e - s;
      }
      if ((f & SB_DISK) && a->has_file) {
        int fd = bdm_open_backing(a, 0);
        if (fd >= 0)
          fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(s * sb), (off_t)((e - s) * sb));
      }
      for (size_t x = s; x < e; x++) a->st[x] = 0;
      s = e;
    }
    if (a->has_file) backing_done(a);
    rel += acct_trim(a);
  }
  UNLOCK();
  do_release(rel);
  return first;
}

int bd_mem_prepare(const void *addr, size_t len, int for_write) {
  if (!bd_mem_active() || len == 0) return 0;
  uintptr_t cur = (uintptr_t)addr, end = cur + len;
  if (end < cur) return -EINVAL;
  while (cur < end) {
    LOCK();
    long i = tab_idx(cur);
    alloc_t *a = NULL;
    if (i >= 0 && cur < G.tab[i]->base + G.tab[i]->len)
      a = G.tab[i];
    else if ((size_t)(i + 1) < G.ntab && G.tab[i + 1]->base < end)
      a = G.tab[i + 1];
    uintptr_t l = 0, h = 0;
    if (a) {
      l = cur > a->base ? cur : a->base;
      h = end < a->base + a->len ? end : a->base + a->len;
    }
    UNLOCK();
    if (!a) break;
    int rc = ensure(l, h, for_write ? 1 : 0, 0);
    if (rc < 0) return rc;
    cur = h;
  }
  return 0;
}

size_t bd_mem_resident_bytes(void) {
  LOCK();
  size_t r = G.st.resident;
  UNLOCK();
  return r;
}

void bd_mem_stats(bd_mem_stats_t *out) {
  LOCK();
  *out = G.st;
  UNLOCK();
}
