/* The remote-memory tier's tables (remote.c): sbpages by rank, allocation
 * and number, chained hashing in a table that doubles as it fills. */
#include <stdlib.h>

#include "remote.h"

static uint64_t hkey(const rkey_t *k)
{
    uint64_t h = (uint64_t)(uint32_t)k->node * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uint32_t)k->slot * 0xc2b2ae3d27d4eb4full;
    h ^= k->id * 0x165667b19e3779f9ull;
    h ^= k->sb * 0x27d4eb2f165667c5ull;
    return h ^ (h >> 29);
}

static int keq(const rkey_t *a, const rkey_t *b)
{
    return a->node == b->node && a->slot == b->slot && a->id == b->id && a->sb == b->sb;
}

rent_t *bdr_rtab_find(rtab_t *t, const rkey_t *k)
{
    if (!t->nb)
        return NULL;
    for (rent_t *e = t->b[hkey(k) & (t->nb - 1)]; e; e = e->next)
        if (keq(&e->k, k))
            return e;
    return NULL;
}

static int grow(rtab_t *t)
{
    size_t nb = t->nb ? t->nb * 2 : 1024;
    rent_t **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < t->nb; i++)
        for (rent_t *e = t->b[i], *nx; e; e = nx) {
            nx = e->next;
            rent_t **p = &b[hkey(&e->k) & (nb - 1)];
            e->next = *p;
            *p = e;
        }
    free(t->b);
    t->b = b;
    t->nb = nb;
    return 0;
}

/* The entry of k, made if absent; NULL out of memory. */
rent_t *bdr_rtab_get(rtab_t *t, const rkey_t *k)
{
    rent_t *e = bdr_rtab_find(t, k);
    if (e)
        return e;
    if (t->n >= t->nb && grow(t) < 0)
        return NULL;
    e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->k = *k;
    rent_t **p = &t->b[hkey(k) & (t->nb - 1)];
    e->next = *p;
    *p = e;
    t->n++;
    return e;
}

void bdr_rtab_del(rtab_t *t, const rkey_t *k)
{
    if (!t->nb)
        return;
    for (rent_t **p = &t->b[hkey(k) & (t->nb - 1)]; *p; p = &(*p)->next)
        if (keq(&(*p)->k, k)) {
            rent_t *e = *p;
            *p = e->next;
            bdr_remote_hb_unref(e->hb);
            free(e);
            t->n--;
            return;
        }
}
