/*
 * SCTP Handover, C tier: the same post-dissector fields as
 * dissector/sctpho.lua, computed by the Rust analyzer (linked as a static
 * library): over the capture file named on the command line, read once at
 * the first packet (in tshark, from the plugin's loading on when the
 * command line surely uses the output), or else over the frames as
 * Wireshark first dissects them. This file only registers the fields and
 * expert infos the analyzer's side describes (sctpho_fields(),
 * sctpho_experts()), hands each frame over, adds the analyzer's per-frame
 * items, and prints the analyzer's Statistics text (`-z sctpho`,
 * Statistics > SCTP Handover).
 */
#define WS_BUILD_DLL
#include <wireshark.h>
#include <epan/packet.h>
#include <epan/proto.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/tap.h>
#include <epan/stat_tap_ui.h>
#include <epan/funnel.h>
#include <wiretap/wtap.h>
#include <wiretap/pcap-encap.h>
#include <stdio.h>
#include <string.h>

#include "sctpho.h"

/* The analyzer crate's version, from its Cargo.toml (CMakeLists.txt);
 * checked against the linked library's at registration. */
#ifndef SCTPHO_VERSION
#error "SCTPHO_VERSION: build with dissector/c/CMakeLists.txt (it reads ffi/Cargo.toml)"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = SCTPHO_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;
WS_DLL_PUBLIC void plugin_register(void);
/* What this plugin is (Wireshark 4.2 and later ask; wsutil/plugins.h). */
#ifndef WS_PLUGIN_DESC_DISSECTOR
#define WS_PLUGIN_DESC_DISSECTOR (1UL << 0)
#endif
WS_DLL_PUBLIC uint32_t plugin_describe(void);

static int proto_sctpho = -1;
static gint ett_sctpho = -1;

/* The fields and expert infos, registered from the analyzer's descriptors:
 * an item's field indexes them. */
static int *hf;
static size_t field_count;
static expert_field *ei;
static size_t expert_count;
/* The expert info the "unconfirmed_note" preference turns off. */
static size_t expert_unconfirmed = SIZE_MAX;

static gboolean pref_prescan = TRUE;
static gboolean pref_unconfirmed_note = TRUE;
static gboolean pref_lazy = TRUE;
/* The thresholds of the inferred path state (set to the analyzer's
 * defaults at registration). */
static guint pref_pmr, pref_pf_retrans, pref_rto_max_ms;
static gboolean pref_pf = TRUE;

/* The thresholds the preferences give. */
static sctpho_thresholds thresholds(void)
{
    sctpho_thresholds t;
    t.path_max_retrans = pref_pmr;
    t.pf_retrans = pref_pf ? (int64_t)pref_pf_retrans : -1;
    t.rto_max_ms = pref_rto_max_ms;
    return t;
}

/* Whether the preferences' thresholds are the analyzer's defaults (those
 * of the early pre-scan, started before the preferences are read). */
static gboolean default_thresholds(void)
{
    sctpho_thresholds d, t = thresholds();
    sctpho_default_thresholds(&d);
    return t.path_max_retrans == d.path_max_retrans && t.pf_retrans == d.pf_retrans && t.rto_max_ms == d.rto_max_ms;
}

/* Per opened file: the analysis, made on the first packet, or (deferred)
 * the file to analyse when something first asks for the plugin's output. */
static sctpho_analysis *analysis;
static gboolean attempted;
static char *deferred_path;

/* The early pre-scan: when tshark's command line names the file to read
 * and surely uses this plugin's output, the file is analysed on a thread
 * of its own from the plugin's loading on, while tshark registers its
 * dissectors, reads its preferences and compiles its filters (0.1-0.2 s);
 * the pre-scan then takes this analysis instead of reading the file at
 * the first frame. The Rust analysis shares nothing with Wireshark. */
static GThread *early_scan;
/* The file it reads (the thread has its own copy). */
static char *early_path;
/* Whichever of the thread and the plugin comes second frees an abandoned
 * pre-scan's analysis: the plugin does not wait for one it will not take. */
enum { EARLY_RUNNING, EARLY_DONE, EARLY_ABANDONED };
static gint early_state;
static sctpho_analysis *early_result;
static void abandon_early_scan(void);

/* From the command line: whether this is tshark, and whether it may ask
 * for what this plugin cannot see being asked for (the protocol hierarchy,
 * `-z io,phs`, counts the protocols of a tree that references nothing; a
 * display filter macro may hide a field). */
static gboolean is_tshark, asks_unseen;
/* From the command line too: whatever the trees, this plugin's output is
 * used (`-V`, or a filter, field, protocol or tap naming `sctpho`: the
 * value of -Y, -R, -e, -O, -z, -J or -j), and the pre-scan is not turned
 * off there (`-o sctpho.prescan:FALSE`). */
static gboolean surely_used;
/* What else shows this plugin's output: the expert tap (`-z expert` gets
 * every expert info, tree or not), `_ws.expert` fields, `frame.protocols`
 * (this dissector's layer). */
static int expert_tap = -1, proto_ws_expert = -1, hf_frame_protocols = -1;

/* Wireshark encapsulation -> pcap link type, for the link types the
 * analyzer decodes (the first link type of an encapsulation wins). */
static int link_encap[32];
static uint32_t link_pcap[32];
static size_t link_count;

/* The value of option `opt` (two characters) at args[i], given apart
 * (`-r FILE`) or attached (`-rFILE`); NULL if args[i] is not `opt`. */
static const char *option_value(const char *const *args, int argc, int i, const char *opt)
{
    if (strcmp(args[i], opt) == 0)
        return i + 1 < argc ? args[i + 1] : NULL;
    if (strncmp(args[i], opt, 2) == 0 && args[i][2] != '\0')
        return args[i] + 2;
    return NULL;
}

/* The file tshark / wireshark was asked to read (-r FILE, or FILE), if a
 * regular file; sets is_tshark, asks_unseen and surely_used. */
static char *cmdline_file(void)
{
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *args[512];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 512; i += strlen(buf + i) + 1)
        args[argc++] = buf + i;
    if (argc > 0) {
        const char *base = strrchr(args[0], '/');
        is_tshark = g_str_has_prefix(base ? base + 1 : args[0], "tshark");
    }
    asks_unseen = FALSE;
    for (int i = 1; i < argc; i++)
        if (strstr(args[i], "phs") || strchr(args[i], '$'))
            asks_unseen = TRUE;
    /* Options whose value is a filter, a field, a protocol or a tap. */
    static const char *const uses[] = { "-Y", "-R", "-e", "-O", "-z", "-J", "-j" };
    gboolean named = FALSE, prescan_off = FALSE;
    for (int i = 1; i < argc; i++) {
        const char *preference = option_value(args, argc, i, "-o");
        if (strcmp(args[i], "-V") == 0)
            named = TRUE;
        if (preference && g_str_has_prefix(preference, "sctpho.prescan:")
            && g_ascii_strcasecmp(preference + strlen("sctpho.prescan:"), "TRUE") != 0)
            prescan_off = TRUE;
        for (size_t u = 0; u < G_N_ELEMENTS(uses); u++) {
            const char *value = option_value(args, argc, i, uses[u]);
            named |= value && strstr(value, "sctpho");
        }
    }
    surely_used = named && !prescan_off;
    for (int i = 0; i < argc; i++) {
        const char *file = option_value(args, argc, i, "-r");
        /* "-" is the standard input, and /dev/stdin or a FIFO a pipe too:
         * read incrementally (a second reader would take tshark's bytes). */
        if (file)
            return g_file_test(file, G_FILE_TEST_IS_REGULAR) ? g_strdup(file) : NULL;
    }
    /* (Not `-w FILE`: the file a live capture writes.) */
    if (argc > 1 && args[argc - 1][0] != '-' && (argc < 3 || strcmp(args[argc - 2], "-w") != 0)
        && g_file_test(args[argc - 1], G_FILE_TEST_IS_REGULAR))
        return g_strdup(args[argc - 1]);
    return NULL;
}

static void sctpho_init(void)
{
    attempted = FALSE;
    /* The preferences are read now: the early pre-scan, started before
     * with the default thresholds, is not to be taken when the pre-scan
     * is off or other thresholds are asked for. */
    if (!pref_prescan || !default_thresholds())
        abandon_early_scan();
    expert_tap = find_tap_id("expert");
    proto_ws_expert = proto_get_id_by_filter_name("_ws.expert");
    hf_frame_protocols = proto_registrar_get_id_byname("frame.protocols");
    if (link_count == 0) {
        size_t n = 0;
        const uint32_t *types = sctpho_link_types(&n);
        for (size_t i = 0; i < n && link_count < G_N_ELEMENTS(link_pcap); i++) {
            int encap = wtap_pcap_encap_to_wtap_encap((int)types[i]);
            gboolean known = encap == WTAP_ENCAP_UNKNOWN;
            for (size_t j = 0; j < link_count && !known; j++)
                known = link_encap[j] == encap;
            if (!known) {
                link_encap[link_count] = encap;
                link_pcap[link_count++] = types[i];
            }
        }
    }
}

/* The frame, to the analysis (first pass, in order). */
static void feed(tvbuff_t *tvb, packet_info *pinfo)
{
    const wtap_rec *rec = pinfo->rec;
    sctpho_frame f = { 0 };
    f.number = pinfo->num;
    f.sec = (int64_t)pinfo->abs_ts.secs;
    f.nsec = (int32_t)pinfo->abs_ts.nsecs;
    f.link_type = SCTPHO_LINK_NON_PACKET;
    if (rec && rec->rec_type == REC_TYPE_PACKET) {
        f.link_type = SCTPHO_LINK_UNKNOWN;
        for (size_t i = 0; i < link_count; i++)
            if (link_encap[i] == rec->rec_header.packet_header.pkt_encap)
                f.link_type = link_pcap[i];
        if (rec->presence_flags & WTAP_HAS_INTERFACE_ID)
            f.interface = rec->rec_header.packet_header.interface_id;
        f.original_len = rec->rec_header.packet_header.len;
        f.len = tvb_captured_length(tvb);
        f.data = f.len ? tvb_get_ptr(tvb, 0, (gint)f.len) : NULL;
    }
    sctpho_feed(analysis, &f);
}

static gpointer early_scan_run(gpointer path)
{
    sctpho_analysis *a = sctpho_analyze_file(path);
    g_free(path);
    /* The plugin reads early_result only after joining this thread. */
    if (g_atomic_int_compare_and_exchange(&early_state, EARLY_RUNNING, EARLY_DONE))
        early_result = a;
    else
        sctpho_free(a);
    return NULL;
}

/* Starts the early pre-scan if tshark's command line asks for it. */
static void start_early_scan(void)
{
    char *path = cmdline_file();
    if (path && is_tshark && surely_used) {
        char *copy = g_strdup(path);
        early_state = EARLY_RUNNING;
        early_scan = g_thread_try_new("sctpho-prescan", early_scan_run, copy, NULL);
        if (!early_scan) /* analysed at the first frame, as without it */
            g_free(copy);
    }
    if (early_scan)
        early_path = path;
    else
        g_free(path);
}

/* No early pre-scan any more (its thread joined or left to itself). */
static void forget_early_scan(void)
{
    early_scan = NULL;
    g_free(early_path);
    early_path = NULL;
}

/* Drops the early pre-scan without waiting for it. */
static void abandon_early_scan(void)
{
    if (!early_scan)
        return;
    if (g_atomic_int_compare_and_exchange(&early_state, EARLY_RUNNING, EARLY_ABANDONED)) {
        g_thread_unref(early_scan); /* it frees its analysis when done */
    } else {
        g_thread_join(early_scan); /* done already */
        sctpho_free(early_result);
        early_result = NULL;
    }
    forget_early_scan();
}

/* Whether the early pre-scan read `path`; if so, its analysis (waiting
 * for it; NULL if the file could not be analysed) is in *a. It is taken
 * once: a later file is read again. */
static gboolean take_early_scan(const char *path, sctpho_analysis **a)
{
    if (!early_scan || strcmp(early_path, path) != 0) {
        abandon_early_scan();
        return FALSE;
    }
    g_thread_join(early_scan);
    *a = early_result;
    early_result = NULL;
    forget_early_scan();
    return TRUE;
}

/* The pre-scan of the file at `path`. */
static sctpho_analysis *prescan(const char *path)
{
    sctpho_analysis *a = NULL;
    sctpho_thresholds t = thresholds();
    return take_early_scan(path, &a) ? a : sctpho_analyze_file_with(path, &t);
}

/* An analysis fed frame by frame. */
static sctpho_analysis *incremental(void)
{
    sctpho_thresholds t = thresholds();
    return sctpho_incremental_with(&t);
}

static void sctpho_cleanup(void)
{
    /* An early pre-scan the file dissected did not take. (Only after a
     * first frame: tshark calls no cleanup before its first file, but a
     * pre-scan is never dropped before that file could take it.) */
    if (attempted)
        abandon_early_scan();
    sctpho_free(analysis);
    analysis = NULL;
    g_free(deferred_path);
    deferred_path = NULL;
    attempted = FALSE;
}

/* Nothing of this plugin is shown, filtered on or tapped in this
 * dissection: no columns, no expert tap, and either no tree or (tshark's
 * command line asking for nothing unseen) a tree that references none of
 * this protocol's fields, experts or layer, nor `_ws.expert`. Only in
 * tshark: the GUI's first pass also sets the status bar's expert severity. */
static gboolean quiet(proto_tree *tree, packet_info *pinfo)
{
    if (!pref_lazy || !is_tshark || pinfo->cinfo || (expert_tap >= 0 && have_tap_listener(expert_tap)))
        return FALSE;
    if (!tree)
        return TRUE;
    return !asks_unseen && !proto_field_is_referenced(tree, proto_sctpho)
           && !(proto_ws_expert > 0 && proto_field_is_referenced(tree, proto_ws_expert))
           && !(hf_frame_protocols > 0 && proto_field_is_referenced(tree, hf_frame_protocols));
}

/* The file's first frame is this one (length and time): the file named is
 * the one Wireshark reads. */
static gboolean first_frame_matches(const char *path, tvbuff_t *tvb, packet_info *pinfo)
{
    size_t len = 0;
    int64_t ns = 0;
    if (pinfo->num != 1 || !sctpho_first_frame(path, &len, &ns) || len != tvb_captured_length(tvb))
        return FALSE;
    int64_t here = (int64_t)pinfo->abs_ts.secs * 1000000000 + pinfo->abs_ts.nsecs;
    return here - ns <= 1000 && ns - here <= 1000;
}

/* The pre-scan the first frame deferred (nothing asked for the plugin's
 * output then), made when a tree or the statistics first do; frame-by-frame
 * analysis when it cannot be made. */
static void run_deferred_prescan(void)
{
    if (!deferred_path)
        return;
    analysis = prescan(deferred_path);
    g_free(deferred_path);
    deferred_path = NULL;
    if (!analysis)
        analysis = incremental();
}

static int dissect_sctpho(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    if (!attempted) {
        attempted = TRUE;
        char *path = cmdline_file();
        if (path && pref_prescan) {
            if (quiet(tree, pinfo) && first_frame_matches(path, tvb, pinfo)) {
                /* Nothing asks for the output yet (`tshark -q -z
                 * conv,sctp`): analysed when something does, if ever. */
                deferred_path = path;
                path = NULL;
            } else {
                analysis = prescan(path);
            }
        }
        g_free(path);
        if (!analysis && !deferred_path)
            analysis = incremental();
    }
    if (quiet(tree, pinfo)) {
        /* Nothing to show: only frame-by-frame analysis must go on. */
        if (analysis && !PINFO_FD_VISITED(pinfo))
            feed(tvb, pinfo);
        return 0;
    }
    run_deferred_prescan();
    if (!analysis)
        return 0;
    if (!PINFO_FD_VISITED(pinfo))
        feed(tvb, pinfo);
    size_t count = 0;
    const sctpho_item *items = sctpho_frame_items(analysis, pinfo->num, PINFO_FD_VISITED(pinfo), &count);
    if (!items || count == 0)
        return 0;
    proto_item *top = proto_tree_add_item(tree, proto_sctpho, tvb, 0, 0, ENC_NA);
    proto_tree *t = proto_item_add_subtree(top, ett_sctpho);
    for (size_t i = 0; i < count; i++) {
        const sctpho_item *it = &items[i];
        guint32 f = it->field;
        switch (it->kind) {
        case SCTPHO_UINT:
            if (f < field_count)
                proto_tree_add_uint(t, hf[f], tvb, 0, 0, (guint32)it->uint);
            break;
        case SCTPHO_BOOL:
            if (f < field_count)
                proto_tree_add_boolean(t, hf[f], tvb, 0, 0, it->uint != 0);
            break;
        case SCTPHO_DOUBLE:
            if (f < field_count)
                proto_tree_add_double(t, hf[f], tvb, 0, 0, it->dbl);
            break;
        case SCTPHO_STRING:
            if (f < field_count)
                proto_tree_add_string(t, hf[f], tvb, 0, 0, it->string);
            break;
        case SCTPHO_EXPERT:
            if (f < expert_count && (f != expert_unconfirmed || pref_unconfirmed_note))
                expert_add_info_format(pinfo, top, &ei[f], "%s", it->string);
            break;
        case SCTPHO_INFO:
            col_append_str(pinfo->cinfo, COL_INFO, it->string);
            break;
        }
    }
    return tvb_captured_length(tvb);
}

/* The Statistics text over what was analysed (the same as the Lua tier's):
 * a pre-scan still deferred is made now. */
static const char *summary_text(void)
{
    run_deferred_prescan();
    const char *text = analysis ? sctpho_summary(analysis) : NULL;
    return text ? text : "SCTP Handover: no capture analysed yet";
}

/* `tshark -z sctpho`: the text, once the capture has been read. */
static void stat_draw(void *tapdata _U_)
{
    printf("%s\n", summary_text());
}

static void stat_init(const char *opt_arg _U_, void *userdata _U_)
{
    static int listener;
    GString *error = register_tap_listener("frame", &listener, NULL, 0, NULL, NULL, stat_draw, NULL);
    if (error) {
        ws_warning("sctpho: -z sctpho: %s", error->str);
        g_string_free(error, TRUE);
    }
}

/* Statistics > SCTP Handover in the GUI: the text in a window. */
static void stat_menu(gpointer data _U_)
{
    const funnel_ops_t *ops = funnel_get_funnel_ops();
    if (!ops || !ops->new_text_window || !ops->set_text)
        return;
    funnel_text_window_t *window = ops->new_text_window(ops->ops_id, "SCTP Handover");
    ops->set_text(window, summary_text());
}

static void register_statistics(void)
{
    static stat_tap_ui ui = { REGISTER_PACKET_STAT_GROUP_UNSORTED, "SCTP Handover", "sctpho", stat_init, 0, NULL };
    register_stat_tap_ui(&ui, NULL);
    funnel_register_menu("SCTP Handover", REGISTER_PACKET_STAT_GROUP_UNSORTED, stat_menu, NULL, NULL, FALSE);
}

static enum ftenum field_type(sctpho_field_type t)
{
    switch (t) {
    case SCTPHO_FT_UINT16: return FT_UINT16;
    case SCTPHO_FT_UINT32: return FT_UINT32;
    case SCTPHO_FT_DOUBLE: return FT_DOUBLE;
    case SCTPHO_FT_STRING: return FT_STRING;
    case SCTPHO_FT_BOOLEAN: return FT_BOOLEAN;
    case SCTPHO_FT_FRAMENUM: return FT_FRAMENUM;
    }
    return FT_NONE;
}

static int field_display(sctpho_field_display d)
{
    return d == SCTPHO_BASE_DEC ? BASE_DEC : BASE_NONE;
}

/* The `strings` of a frame-number field: what it points at. */
static const void *frame_role(sctpho_frame_role r)
{
    switch (r) {
    case SCTPHO_FRAME_REQUEST: return FRAMENUM_TYPE(FT_FRAMENUM_REQUEST);
    case SCTPHO_FRAME_RESPONSE: return FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE);
    case SCTPHO_FRAME_NONE: break;
    }
    return NULL;
}

static int expert_group(sctpho_expert_group g)
{
    switch (g) {
    case SCTPHO_GROUP_SEQUENCE: return PI_SEQUENCE;
    case SCTPHO_GROUP_RESPONSE_CODE: return PI_RESPONSE_CODE;
    case SCTPHO_GROUP_MALFORMED: return PI_MALFORMED;
    }
    return PI_SEQUENCE;
}

static int expert_severity(sctpho_expert_severity s)
{
    switch (s) {
    case SCTPHO_SEVERITY_CHAT: return PI_CHAT;
    case SCTPHO_SEVERITY_NOTE: return PI_NOTE;
    case SCTPHO_SEVERITY_WARN: return PI_WARN;
    }
    return PI_NOTE;
}

/* The fields and expert infos as the analyzer's side describes them (as
 * Wireshark's falco_bridge plugin registers the fields its plugins
 * describe): Wireshark keeps pointers into these arrays, so they live as
 * long as the process; the strings are the library's static ones. */
static void register_fields(void)
{
    const sctpho_field_info *fields = sctpho_fields(&field_count);
    hf = g_new(int, field_count);
    hf_register_info *hfi = g_new0(hf_register_info, field_count);
    for (size_t i = 0; i < field_count; i++) {
        const sctpho_field_info *d = &fields[i];
        hf[i] = -1;
        hf_register_info r = { &hf[i], { d->name, d->abbrev, field_type(d->type), field_display(d->display),
                                         d->type == SCTPHO_FT_FRAMENUM ? frame_role(d->role) : NULL, 0, d->blurb,
                                         HFILL } };
        hfi[i] = r;
    }
    proto_register_field_array(proto_sctpho, hfi, (int)field_count);

    const sctpho_expert_info *experts = sctpho_experts(&expert_count);
    ei = g_new(expert_field, expert_count);
    ei_register_info *eii = g_new0(ei_register_info, expert_count);
    for (size_t i = 0; i < expert_count; i++) {
        const sctpho_expert_info *d = &experts[i];
        expert_field unset = EI_INIT;
        ei[i] = unset;
        ei_register_info r = { &ei[i], { d->abbrev, expert_group(d->group), expert_severity(d->severity), d->summary,
                                         EXPFILL } };
        eii[i] = r;
        if (strcmp(d->abbrev, "sctpho.expert.unconfirmed") == 0)
            expert_unconfirmed = i;
    }
    expert_module_t *em = expert_register_protocol(proto_sctpho);
    expert_register_field_array(em, eii, (int)expert_count);
}

static void proto_register_sctpho(void)
{
    static gint *ett[] = { &ett_sctpho };
    proto_sctpho = proto_register_protocol("SCTP Handover", "SCTP Handover", "sctpho");
    if (strcmp(plugin_version, sctpho_version()) != 0)
        ws_warning("sctpho: plugin %s linked with analyzer library %s", plugin_version, sctpho_version());
    register_fields();
    proto_register_subtree_array(ett, array_length(ett));
    module_t *prefs = prefs_register_protocol(proto_sctpho, NULL);
    prefs_register_bool_preference(prefs, "unconfirmed_note", "Note DATA to unconfirmed addresses",
                                   "Add an expert note to DATA sent to an address not yet confirmed by a HEARTBEAT ACK.",
                                   &pref_unconfirmed_note);
    prefs_register_bool_preference(prefs, "prescan", "Pre-scan the capture file",
                                   "Read the whole capture file (named on the command line) once at the start, so that "
                                   "look-ahead annotations (ASCONF-ACK frame, unanswered ASCONF) are complete in a single pass.",
                                   &pref_prescan);
    prefs_register_bool_preference(prefs, "lazy", "Analyse only when the output is used (tshark)",
                                   "In tshark, analyse the capture only when something uses this plugin's output (a tree, the "
                                   "columns, a filter or tap on its fields): a run that uses none of it pays almost nothing.",
                                   &pref_lazy);
    sctpho_thresholds d;
    sctpho_default_thresholds(&d);
    pref_pmr = d.path_max_retrans;
    pref_pf = d.pf_retrans >= 0;
    pref_pf_retrans = d.pf_retrans >= 0 ? (guint)d.pf_retrans : 0;
    pref_rto_max_ms = d.rto_max_ms;
    prefs_register_uint_preference(prefs, "pmr", "Path.Max.Retrans",
                                   "Errors (T3 expiries, unanswered HEARTBEATs) after which a path is inferred inactive: "
                                   "inactive when its error counter exceeds this (RFC 9260 Path.Max.Retrans, Linux's "
                                   "net.sctp.path_max_retrans).",
                                   10, &pref_pmr);
    prefs_register_bool_preference(prefs, "pf", "Infer the potentially-failed state",
                                   "Infer RFC 7829's potentially-failed state (Linux's net.sctp.pf_enable); off for a "
                                   "sender with the state off.",
                                   &pref_pf);
    prefs_register_uint_preference(prefs, "pf_retrans", "Potentially-failed threshold (PFMR)",
                                   "A path is inferred potentially failed when its error counter exceeds this (RFC 7829 "
                                   "PFMR, Linux's net.sctp.pf_retrans), while below Path.Max.Retrans: at or above "
                                   "Path.Max.Retrans - 1 the state is off, as in Linux.",
                                   10, &pref_pf_retrans);
    prefs_register_uint_preference(prefs, "rto_max_ms", "RTO.Max (ms)",
                                   "The sender's RTO.Max: a T3 expiry whose DATA was sent more than RTO.Max before a reset "
                                   "of the path's error counter came before that reset and is not charged (docs/metrics.md).",
                                   10, &pref_rto_max_ms);
    register_init_routine(sctpho_init);
    register_cleanup_routine(sctpho_cleanup);
    register_statistics();
}

static void proto_reg_handoff_sctpho(void)
{
    dissector_handle_t h = create_dissector_handle(dissect_sctpho, proto_sctpho);
    register_postdissector(h);
}

uint32_t plugin_describe(void)
{
    return WS_PLUGIN_DESC_DISSECTOR;
}

void plugin_register(void)
{
    start_early_scan();
    static proto_plugin plug;
    plug.register_protoinfo = proto_register_sctpho;
    plug.register_handoff = proto_reg_handoff_sctpho;
    proto_register_plugin(&plug);
}
