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
    SCTPHO_BOOL = 5, /* uint: 0 or 1 */
} sctpho_kind;

typedef struct {
    uint32_t field; /* index into field_names (expert_names for experts) */
    sctpho_kind kind;
    uint64_t uint;
    double dbl;
    const char *string;
} sctpho_item;

/* link_type of a record that holds no packet, and of an encapsulation with
 * no pcap link type the analyzer decodes. */
#define SCTPHO_LINK_NON_PACKET 0xfffffffeu
#define SCTPHO_LINK_UNKNOWN 0xffffffffu

/* One frame as Wireshark dissects it. */
typedef struct {
    uint64_t number;
    int64_t sec;
    int32_t nsec;
    uint32_t link_type; /* pcap LINKTYPE_* value */
    uint32_t interface; /* pcapng interface id */
    uint32_t original_len;
    const uint8_t *data;
    size_t len;
} sctpho_frame;

typedef struct sctpho_analysis sctpho_analysis;

/* The thresholds of the inferred path state (the analyzer's --pmr,
 * --pf-retrans / --no-pf and --rto-max-ms). */
typedef struct {
    uint32_t path_max_retrans;
    int64_t pf_retrans; /* negative: the potentially-failed state is off */
    uint32_t rto_max_ms;
} sctpho_thresholds;

/* The analyzer's default thresholds. */
void sctpho_default_thresholds(sctpho_thresholds *out);
/* The capture file at path, analysed now (NULL if it is not a capture),
 * with the default thresholds, or those at t (_with; NULL: defaults). */
sctpho_analysis *sctpho_analyze_file(const char *path);
sctpho_analysis *sctpho_analyze_file_with(const char *path, const sctpho_thresholds *t);
/* The first frame of the capture file at path, from the file's first MiB:
 * nonzero, with its captured length (SIZE_MAX for a record that holds no
 * packet) and time in ns since the epoch, when there is one. */
int sctpho_first_frame(const char *path, size_t *len, int64_t *time_ns);
/* An empty analysis, fed frame by frame (with the default thresholds, or
 * those at t). */
sctpho_analysis *sctpho_incremental(void);
sctpho_analysis *sctpho_incremental_with(const sctpho_thresholds *t);
/* The pcap link types the analyzer decodes. */
const uint32_t *sctpho_link_types(size_t *count);
/* Each frame in order as Wireshark first dissects it: checked against a
 * pre-scanned file (falling back to incremental analysis when it is not
 * that file's frame), analysed otherwise. */
void sctpho_feed(sctpho_analysis *a, const sctpho_frame *frame);
/* The frame's items, valid until the next call; complete: nonzero when
 * the capture has been read (a re-dissection). */
const sctpho_item *sctpho_frame_items(sctpho_analysis *a, uint64_t frame, int complete, size_t *count);
void sctpho_free(sctpho_analysis *a);

#endif
