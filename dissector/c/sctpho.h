/* C interface of the sctp-handover analyzer (dissector/c/ffi). */
#ifndef SCTPHO_H
#define SCTPHO_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SCTPHO_UINT = 0,
    SCTPHO_DOUBLE = 1,
    SCTPHO_STRING = 2,
    SCTPHO_EXPERT = 3,
    SCTPHO_INFO = 4,
} sctpho_kind;

typedef struct {
    uint32_t field; /* index into field_names (expert_names for experts) */
    sctpho_kind kind;
    uint64_t uint;
    double dbl;
    const char *string;
} sctpho_item;

typedef struct sctpho_analysis sctpho_analysis;

sctpho_analysis *sctpho_analyze_file(const char *path);
const sctpho_item *sctpho_frame_items(const sctpho_analysis *a, uint64_t frame, size_t *count);
void sctpho_free(sctpho_analysis *a);

#endif
