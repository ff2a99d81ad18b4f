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
    uint32_t field; /* index into sctpho_fields() (sctpho_experts() for experts) */
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

/* The plugin's fields and expert infos, described by the analyzer's side
 * (dissector/c/ffi/src/fields.rs; the Lua tier's table is generated from
 * the same): registered from these at run time. */
typedef enum {
    SCTPHO_FT_UINT16 = 0,
    SCTPHO_FT_UINT32 = 1,
    SCTPHO_FT_DOUBLE = 2,
    SCTPHO_FT_STRING = 3,
    SCTPHO_FT_BOOLEAN = 4,
    SCTPHO_FT_FRAMENUM = 5,
} sctpho_field_type;

typedef enum {
    SCTPHO_BASE_NONE = 0,
    SCTPHO_BASE_DEC = 1,
} sctpho_field_display;

/* What a frame-number field points at (FT_FRAMENUM_*). */
typedef enum {
    SCTPHO_FRAME_NONE = 0,
    SCTPHO_FRAME_REQUEST = 1,
    SCTPHO_FRAME_RESPONSE = 2,
} sctpho_frame_role;

typedef struct {
    const char *abbrev; /* filter name, e.g. "sctpho.asconf.rtt" */
    const char *name;
    const char *blurb; /* what it means */
    sctpho_field_type type;
    sctpho_field_display display;
    sctpho_frame_role role;
} sctpho_field_info;

typedef enum {
    SCTPHO_GROUP_SEQUENCE = 0,
    SCTPHO_GROUP_RESPONSE_CODE = 1,
    SCTPHO_GROUP_MALFORMED = 2,
} sctpho_expert_group;

typedef enum {
    SCTPHO_SEVERITY_CHAT = 0,
    SCTPHO_SEVERITY_NOTE = 1,
    SCTPHO_SEVERITY_WARN = 2,
} sctpho_expert_severity;

typedef struct {
    const char *abbrev;
    const char *summary;
    sctpho_expert_group group;
    sctpho_expert_severity severity;
} sctpho_expert_info;

/* The fields and expert infos (*count of them; static, never freed). */
const sctpho_field_info *sctpho_fields(size_t *count);
const sctpho_expert_info *sctpho_experts(size_t *count);
/* The analyzer crate's version (Cargo's). */
const char *sctpho_version(void);

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
/* The Statistics text (`tshark -z sctpho`), the same as the Lua tier's,
 * over the frames analysed so far; valid until the next call. */
const char *sctpho_summary(sctpho_analysis *a);
void sctpho_free(sctpho_analysis *a);

#endif
