/* The VSM kernel's arguments: the records of vsm_layout.py (Columns, Selection, Tables, State, Watch)
 * as C structs. replay/mapping/vsm_native.py declares the same structs with ctypes: change both.
 *
 * The layout constants (table columns, counters, event codes, shadow bits) are not defined here:
 * the build passes them as -D flags generated from vsm_layout.py, so that they have one source. */
#ifndef QV_VSM_KERNEL_H
#define QV_VSM_KERNEL_H

#include <stdint.h>

typedef int64_t i64;

/* One column set of the log (absolute addresses). loc/eid/aux are NULL when not read yet (lazy): the
 * kernel stops at the first row that needs them. */
typedef struct {
    const int16_t *kind;
    const int32_t *rank;
    const int32_t *device;
    const int32_t *loc;
    const uint64_t *addr;
    const uint64_t *size;
    const int64_t *eid;
    const int32_t *op;
    const int64_t *aux;
    const uint64_t *stride;   /* addr2: distance between the blocks of a strided access */
    const int64_t *blocks;    /* aux2: number of blocks of a strided access */
    const int32_t *planes;    /* name: planes of a strided access (>= 2; format version 5), or NULL */
    const int64_t *pstride;   /* id2: distance between its planes, or a masked run's bitmap (version 6), or NULL */
    i64 lazy;
} qv_columns;

/* Rows rows[first:n_rows] (or first..n_rows-1 when rows is NULL); row 0 is event base. */
typedef struct {
    const i64 *rows;
    i64 first;
    i64 n_rows;
    i64 base;
} qv_selection;

typedef struct {
    const i64 *ct_event;
    const i64 *ct;            /* [n_ct, CT_N] */
    i64 n_ct;
    const i64 *clk_keys;
    const i64 *clk_rows;
    i64 n_clk;
    const i64 *devmap;
    i64 n_devmap;
    i64 ndev;
    i64 all_cvv;
    const i64 *tr_lo;
    const i64 *tr_hi;
    const i64 *tr_base;
    i64 n_tr;
} qv_tables;

typedef struct {
    i64 *cl;                  /* [n_clauses, CL_N] */
    void *shadow;             /* uint8/16/32/64, by the device count */
    i64 *blo;
    i64 *bhi;
    i64 *bcnt;
    i64 nblocks;
    i64 lgb;
    i64 *en;                  /* [n_entries, EN_N] */
    i64 *lv_key;
    i64 *lv_en;
    i64 *al_lo;
    i64 *al_hi;
    i64 *ctr;                 /* [C_N] */
    i64 *win;                 /* [n_win, 5] */
    i64 n_win;
    i64 *fd;                  /* [fd_cap, F_N] */
    i64 fd_cap;
    i64 *fd_hash;
    i64 fd_hash_len;
    i64 *memo;                /* [SM_CAP, SM_COLS]: the strided memo (vsm_layout.py) */
} qv_state;

typedef struct {
    const i64 *wa_sh;         /* watched shadow bytes, sorted */
    const i64 *wa_id;
    i64 *wa_done;
    i64 *wh;                  /* [n_wa, hmax, 2] */
    i64 *wn;
    i64 n_wa;
    i64 hmax;
    const i64 *st_ev;
    const i64 *st_w;
    i64 n_st;
} qv_watch;

#endif
