//! The published values the reproduction report sets beside its
//! measurements, each with where it stands in the seed paper
//! (../shared/seeds/, see its README.md).

/// One published figure: the value and where it is printed.
pub struct Published {
    pub value: &'static str,
    pub source: &'static str,
}

pub const KOH_KIM_1: Published = Published {
    value: "22 ms",
    source: "Koh & Kim (2005), Fig. 5 and §3.2 A: packets 15 → 23, 0.030 − 0.008 s",
};
pub const KOH_KIM_2: Published = Published {
    value: "93 ms",
    source: "Koh & Kim (2005), Fig. 6 and §3.2 B: packets 12 → 21, 0.104 − 0.011 s",
};
pub const KOH_KIM_RTT: Published = Published {
    value: "Handover latency ≈ SET-PRIMARY ASCONF round trip (≈ RTT) + constant kernel \
            processing at the correspondent, so proportional to the RTT",
    source: "Koh & Kim (2005), §3.2 A (after Fig. 5) and §4",
};

pub const BOKOR_LINEAR: Published = Published {
    value: "DATA transmission interrupt rises linearly with RTO when RTO.min = RTO.max \
            (PMR 5, HB.Interval 10 s); eq. (4) Δ = PMR · RTO",
    source: "Bokor et al. (2010), Fig. 3 and Fig. 4, eq. (4)",
};
pub const BOKOR_DEFAULT: Published = Published {
    value: "with default RTO settings the delay rises exponentially (RTO doubling, \
            eq. (3) Δ = Σ_{i<PMR} RTO · 2^i); measured average with RTO.Min 1 s, RTO.Max 60 s: 227 s",
    source: "Bokor et al. (2010), text after eq. (4) and Fig. 5, eq. (3)",
};
pub const BOKOR_RECOGNITION: Published = Published {
    value: "link availability recognition time grows with HB.Interval and is independent \
            of RTO; heartbeats every H = RTO · (1 + δ) + HB.Interval, δ ∈ [−0.5, 0.5]",
    source: "Bokor et al. (2010), Fig. 6, eq. (1)",
};
pub const BOKOR_RETRANSMISSIONS: Published = Published {
    value: "a lower RTO.Max retransmits the lost packets more often (more retransmissions), \
            a higher one lengthens the failover",
    source: "Bokor et al. (2010), Fig. 7 and the text before it",
};

pub const BOKOR_FIG5: Published = Published {
    value: "the joint impact of RTO.Max and PMR on the link failure recovery time: with RTO \
            doubling it rises exponentially with PMR (eq. (3) Δ = Σ_{i<PMR} RTO · 2^i)",
    source: "Bokor et al. (2010), Fig. 5 and the text before it, eq. (3)",
};
pub const BOKOR_FIG2: Published = Published {
    value: "TSN against time, DATA through the WLAN blue and through UMTS red: the WLAN → UMTS \
            handover interrupts the transfer (failure detection, retransmission), the return \
            is faster (no failure detection, no retransmission)",
    source:
        "Bokor et al. (2010), Fig. 2 and the text before it (HB.Interval 10 s, RTO 4000 ms, PMR 5)",
};
pub const BOKOR_FIG12: Published = Published {
    value: "SCTP throughput during a 3G → appearing-WLAN handover rises as HB.Interval falls; \
            the heartbeats' overhead is outweighed by the earlier recognition",
    source: "Bokor et al. (2010), Fig. 12 (PMR 2, RTO.Max 180 ms)",
};

/// Honda (2007), Tables 5.1–5.4: (component, SmSCTP, Normal SCTP) in
/// seconds as printed; `None` where the table has no such row.
pub struct HondaTable {
    pub name: &'static str,
    pub source: &'static str,
    /// Association A: MN → CN data; B: CN → MN data.
    pub sender_is_mn: bool,
    pub dad: bool,
    pub rows: [(&'static str, Option<&'static str>, Option<&'static str>); 6],
}

pub const HONDA: [HondaTable; 4] = [
    HondaTable {
        name: "Table 5.1: Association A (MN → CN) with DAD",
        source: "Honda (2007), Table 5.1 (10-time averages)",
        sender_is_mn: true,
        dad: true,
        rows: [
            ("total_handover_latency", Some("2.149"), Some("5.747")),
            ("network_disconnection", Some("2.087"), Some("2.413")),
            ("transport_latency", Some("0.062"), Some("3.334")),
            ("addip_sent", Some("0.002"), Some("2.202")),
            ("setprim_sent", None, None),
            ("sender_recovery", Some("0.007"), Some("1.065")),
        ],
    },
    HondaTable {
        name: "Table 5.2: Association B (CN → MN) with DAD",
        source: "Honda (2007), Table 5.2 (10-time averages)",
        sender_is_mn: false,
        dad: true,
        rows: [
            ("total_handover_latency", Some("2.024"), Some("17.388")),
            ("network_disconnection", Some("1.945"), Some("2.186")),
            ("transport_latency", Some("0.079"), Some("16.202")),
            ("addip_sent", Some("0.002"), Some("1.002")),
            ("setprim_sent", Some("0.001"), Some("1.000")),
            ("sender_recovery", Some("0.0009"), Some("13.883")),
        ],
    },
    HondaTable {
        name: "Table 5.3: Association A (MN → CN) without DAD",
        source: "Honda (2007), Table 5.3",
        sender_is_mn: true,
        dad: false,
        rows: [
            ("total_handover_latency", Some("1.063"), Some("3.557")),
            ("network_disconnection", Some("0.990"), Some("0.741")),
            ("transport_latency", Some("0.072"), Some("2.816")),
            ("addip_sent", Some("0.002"), Some("1.202")),
            ("setprim_sent", None, None),
            ("sender_recovery", Some("0.006"), Some("1.146")),
        ],
    },
    HondaTable {
        name: "Table 5.4: Association B (CN → MN) without DAD",
        source: "Honda (2007), Table 5.4",
        sender_is_mn: false,
        dad: false,
        rows: [
            ("total_handover_latency", Some("0.709"), Some("31.612")),
            ("network_disconnection", Some("0.625"), Some("0.828")),
            ("transport_latency", Some("0.084"), Some("30.784")),
            ("addip_sent", Some("0.002"), Some("1.001")),
            ("setprim_sent", Some("0.0008"), Some("1.000")),
            ("sender_recovery", Some("0.001"), Some("27.384")),
        ],
    },
];

pub const HONDA_DUPLICATES: Published = Published {
    value: "SmSCTP: 2 duplicate chunks before the first new DATA (with DAD), 1 (without DAD); \
            no count is given for normal SCTP",
    source: "Honda (2007), §5.1.1 and §5.2.1",
};

pub const HONDA_FIGURES: Published = Published {
    value: "TSN growth in associations A and B around the handover, with and without DAD: \
            SmSCTP resumes right after the ASCONF-ACK, normal SCTP after seconds",
    source: "Honda (2007), Figs. 5.2–5.5 and §5.1–5.2",
};

pub const EKLUND_TUNING: Published = Published {
    value: "tuning PMR and RTO.min/RTO.max (a reduced RTO.min, RTO.max kept) and relaxing the \
            RTO's exponential back-off shortens failover for telephony signalling",
    source: "Eklund (2015), thesis summary of Paper II (\"Tuning SCTP Failover for Carrier \
             Grade Telephony Signaling\") and §3.1.1",
};
pub const EKLUND_SLOW_START: Published = Published {
    value: "after a path switch slow start may lengthen an individual message's transfer by \
            up to 75 % against an ideal startup (high-load traffic)",
    source: "Eklund (2015), thesis summary of Papers IV and V",
};

pub const EKLUND: Published = Published {
    value: "for low-intensity traffic the failover time may be more than 60 % longer with the \
            default 200 ms SACK delay than with the SACK delay disabled; a small SACK delay \
            above zero removes most of the penalty",
    source: "Eklund (2015), thesis summary of Paper I (\"On the Relation Between SACK Delay \
             and SCTP Failover Performance for Different Traffic Distributions\")",
};

pub const WANG_SONG_DAR: Published = Published {
    value: "768 bits (96 bytes) per handover: three ASCONF (192 bits) / ASCONF-ACK (64 bits) pairs",
    source: "Wang & Song, eq. (26)–(27), §4.2.2",
};
/// 768 bits in bytes.
pub const WANG_SONG_DAR_BYTES: f64 = 96.0;
pub const WANG_SONG_RATE: Published = Published {
    value: "handoff delay, throughput and packet loss of MIP and mSCTP as functions of the \
            handoff rate (analytical model and simulation)",
    source: "Wang & Song, §4.3 and its figures",
};
pub const WANG_SONG_LOSS: Published = Published {
    value: "0 packets lost per mSCTP handover (handover delay zero, eq. (5), (32))",
    source: "Wang & Song, §4.3.2",
};
