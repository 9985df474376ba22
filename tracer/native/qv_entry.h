/* qv_entry.h - the `desc` argument of the pass plugin's entry points (qv_entry_points.inc), for the
 * tracers (C) and the pass (C++): one statement of its bits. */
#ifndef QV_ENTRY_H
#define QV_ENTRY_H

#define QV_DESC_WIDTH 0xff    /* bytes of one access (1..16); 0: a range or a mixed block */
#define QV_DESC_INDEXED 0x100 /* the address depends on a value the loop loaded (`p[col[k]]`) */
#define QV_RANGE_OF 0x200     /* a range of accesses of that width (a hoisted loop) */
#define QV_DESC_MAYBE 0x400   /* a single access its loop skips on some iterations (`if (c) v[i] = x`):
                                 its runs may have gaps (masked runs, FORMAT.md version 6) */
#define QV_DESC_PITCH_SHIFT 16 /* with QV_DESC_MAYBE: bits 16..31 = bytes from one iteration's access to the
                                  next's when more than its width (a field of an array of structs,
                                  `if (p[i].alive) p[i].x += ...`): its masked runs' slots are that far apart */
#define QV_DESC_PITCH(desc) (((desc) >> QV_DESC_PITCH_SHIFT) & 0xffff)
/* 64-bit words of a conditional access's call-site bitmap (qv_site.bits, which the pass's code sets)
 * and of a masked run's: QV_MASK_WORDS * 64 slots, written as one masked row per word (FORMAT.md: at most
 * 64 slots a row) */
#define QV_MASK_WORDS 8

#endif
